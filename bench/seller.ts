/**
 * The bench's seller process: fastify on 127.0.0.1 (plain HTTP: the buyer-to-seller hop
 * is not the gateway's cost, and both routes below share it) with the seller middleware.
 *   GET /forecast        paid: 402 challenge, authorize, handler, complete, receipt
 *   GET /free/forecast   the same handler with payments off (the unpaid baseline)
 */
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { agentpaySeller } from '../packages/sdk/src/seller/fastify.js';
import { ready, serve } from './lib/ipc.js';
import { UsageMeter } from './lib/usage.js';

const env = (k: string) => {
  const v = process.env[k];
  if (!v) throw new Error(`seller: ${k} is not set`);
  return v;
};

// off: every gateway call on its own request; a number: batched with that many requests in flight
const batchSetting = process.env.BENCH_SELLER_BATCH ?? 'default';
const batch = batchSetting === 'off' ? false as const : batchSetting === 'default' ? undefined : { maxInFlight: Number(batchSetting) };

let sellerErrors = 0;
const app = Fastify({ logger: false, keepAliveTimeout: 60_000 });
await app.register(agentpaySeller, {
  gatewayUrl: env('BENCH_GATEWAY_URL'),
  apiKey: env('BENCH_PROVIDER_KEY'),
  ca: env('BENCH_CA'),
  capabilityId: env('BENCH_CAPABILITY_ID'),
  ...(batch !== undefined ? { batch } : {}),
  onError: (e, c) => {
    // counted and shown once in a while, never per request (that would be the bottleneck)
    if (sellerErrors++ % 1000 === 0) console.error(`seller: ${c.stage} failed (${sellerErrors} so far):`, e);
  },
});

const forecast = async () => ({ city: 'Lisbon', sunny: true, tempC: 21 });
app.get('/forecast', forecast);
app.get('/free/forecast', { config: { agentpay: false } }, forecast);

await app.listen({ host: '127.0.0.1', port: 0 });
const usage = new UsageMeter();
serve({
  usage: () => ({ ...usage.take(), sellerErrors }),
  stop: async () => {
    await app.close();
    setImmediate(() => process.exit(0));
  },
});
process.on('SIGTERM', () => void app.close().finally(() => process.exit(0)));
ready({ url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, pid: process.pid });
