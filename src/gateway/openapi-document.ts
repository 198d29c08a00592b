/**
 * The OpenAPI document without a running gateway (`agentpay openapi`, the build): the app is
 * built on an in-memory database with throwaway signing keys, never listens, and is asked for
 * its document (plugins/openapi.ts). Sandbox mode with the sandbox rails, as `agentpay dev`
 * serves, so that every route a gateway can have is in it.
 */
import { systemClock } from '../core/clock.js';
import { randomIds } from '../core/ids.js';
import { ensurePlatform } from '../domain/tenancy/tenants.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { buildApp } from './app.js';
import { resolveConfig } from './config.js';
import { buildServices } from './services.js';

export async function openapiDocument(): Promise<Record<string, unknown>> {
  const store = new SqliteStore({ path: ':memory:' });
  try {
    const ctx = { store, clock: systemClock, ids: randomIds };
    await store.tx((r) => ensurePlatform(r, ctx));
    const keys = new Map<string, string>();
    const config = resolveConfig({ mode: 'sandbox', rails: { webhookSecret: 'openapi-document' } });
    const services = await buildServices(ctx, config, { read: (id) => keys.get(id), write: (id, pem) => void keys.set(id, pem) });
    const app = await buildApp({ services, logger: false });
    try {
      await app.ready();
      return app.swagger() as unknown as Record<string, unknown>;
    } finally {
      await app.close();
    }
  } finally {
    await store.close();
  }
}
