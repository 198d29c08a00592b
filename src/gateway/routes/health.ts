import type { FastifyInstance } from 'fastify';

export default async function healthRoutes(app: FastifyInstance) {
  const { signingKeys, ctx } = app.services;
  app.get('/health', { config: { public: true } }, async () => ({
    status: 'ok',
    instance: signingKeys.currentKeyId,
    time: new Date(ctx.clock.now()).toISOString(),
  }));
}
