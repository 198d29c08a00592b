import type { FastifyInstance } from 'fastify';
import { Health } from 'agentpay-sdk/contract';

export default async function healthRoutes(app: FastifyInstance) {
  const { signingKeys, ctx } = app.services;
  app.get('/health', { config: { public: true }, schema: { summary: 'Liveness: the gateway answers', response: { 200: { ...Health, examples: [{ status: 'ok', instance: 'sk_0mwrikwc8pyu0thkg2w6', time: '2026-01-31T12:00:00.000Z' }] } } } }, async () => ({
    status: 'ok',
    instance: signingKeys.currentKeyId,
    time: new Date(ctx.clock.now()).toISOString(),
  }));
}
