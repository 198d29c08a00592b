/**
 * Health for people and for load balancers. `GET /health` (the contract's) and `GET /health/live`
 * say the process answers; `GET /health/ready` also asks the database (one `SELECT 1`) and answers
 * 503 when it does not answer, so a balancer sends no traffic to an instance that cannot serve it.
 * These three routes alone answer over plain HTTP on a gateway started with `--no-tls` (a balancer's
 * check carries no x-forwarded-proto; plugins/transport.ts); they say nothing secret.
 */
import type { FastifyInstance } from 'fastify';
import { Health, HealthReady } from 'agentpay-sdk/contract';
import { AppError } from '../../core/errors.js';

/** How long the readiness check waits for the database before answering 503 (a balancer's check times out soon after). */
export const READY_TIMEOUT_MS = 2000;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** a health route: answered over plain HTTP too when the gateway serves plain HTTP behind a proxy */
    health?: boolean;
  }
}

const EXAMPLE_INSTANCE = 'ins_0mwrikwc8k3v9d2hx7qa';

export default async function healthRoutes(app: FastifyInstance) {
  const { signingKeys, ctx, instanceId } = app.services;
  const live = async () => ({
    status: 'ok' as const,
    instance: signingKeys.currentKeyId,
    instanceId,
    time: new Date(ctx.clock.now()).toISOString(),
  });
  const liveExample = { status: 'ok', instance: 'sk_0mwrikwc8pyu0thkg2w6', instanceId: EXAMPLE_INSTANCE, time: '2026-01-31T12:00:00.000Z' };
  app.get('/health', { config: { public: true, health: true }, schema: { summary: 'Liveness: the gateway answers', response: { 200: { ...Health, examples: [liveExample] } } } }, live);
  app.get('/health/live', { config: { public: true, health: true }, schema: { summary: 'Liveness for a balancer or orchestrator: the process answers (the database is not asked)', response: { 200: { ...Health, examples: [liveExample] } } } }, live);

  app.get('/health/ready', {
    config: { public: true, health: true },
    schema: {
      summary: 'Readiness: the gateway can serve (its database answers a SELECT 1); 503 when not',
      response: { 200: { ...HealthReady, examples: [{ status: 'ready', instanceId: EXAMPLE_INSTANCE, database: 'ok', time: '2026-01-31T12:00:00.000Z' }] } },
    },
  }, async (request) => {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
    });
    try {
      await Promise.race([ctx.store.ping(), timedOut]);
    } catch (err) {
      // the cause (host names, the server's words) goes to the log, not to whoever asked
      request.log.warn({ err, instanceId }, 'readiness check: the database does not answer');
      throw new AppError('SERVICE_UNAVAILABLE', `instance ${instanceId} is not ready: its database does not answer (the cause is in its log); send requests to another instance`, {
        instanceId,
        database: 'unreachable',
      });
    } finally {
      clearTimeout(timer);
    }
    return { status: 'ready' as const, instanceId, database: 'ok' as const, time: new Date(ctx.clock.now()).toISOString() };
  });
}
