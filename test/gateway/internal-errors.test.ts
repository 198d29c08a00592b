/**
 * Broken invariants on a real gateway: GET /v1/platform/public-key keeps answering the key this
 * instance signs with when it cannot follow another instance's rotation (and logs why), and an
 * AppError('INTERNAL') is answered like any unexpected error: 500 "internal error" with an
 * errorId that the log carries with the real message, which the client never sees.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateEd25519 } from '../../src/core/ed25519.js';
import { ensureDevCredentials, type DevCredentials } from '../../src/gateway/dev-credentials.js';
import { startGateway, type RunningGateway } from '../../src/gateway/server.js';
import { AgentpayClient } from '../../packages/sdk/src/client/index.js';
import { createCapability } from '../payments/helpers.js';
import { backendOptions, sqliteOf } from '../helpers/gateway.js';

const lines: Record<string, unknown>[] = [];
let gw: RunningGateway;
let creds: DevCredentials;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'agentpay-internal-'));
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  gw = await startGateway({ ...(await backendOptions(dataDir)), dataDir, port: 0, httpPort: null, signingKeyRefreshMs: 0, logger: { level: 'info', stream } });
  creds = await ensureDevCredentials(gw.services.ctx, dataDir);
});
afterAll(async () => {
  await gw?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const client = (apiKey?: string) => new AgentpayClient({ gatewayUrl: gw.baseUrl, ca: gw.tls!.ca, ...(apiKey ? { apiKey } : {}) });

describe('GET /v1/platform/public-key after another instance rotated to a key this one lacks', () => {
  it('answers 200 with the key this instance still signs with, and logs the failed refresh naming the new key', async () => {
    const signingKeys = gw.services.signingKeys;
    const before = { publicKeyPem: signingKeys.currentPublicKeyPem, signingKeyId: signingKeys.currentKeyId };
    // what another instance's rotate() commits: the row; the private file is in ITS keys directory
    const { ctx } = gw.services;
    const rec = { id: ctx.ids.next('signingKey'), publicKeyPem: generateEd25519().publicKeyPem, status: 'current' as const, createdAt: ctx.clock.now(), retiredAt: null };
    await ctx.store.tx(async (r) => {
      const c = await r.signingKeys.current();
      if (c) await r.signingKeys.retire(c.id, rec.createdAt);
      await r.signingKeys.insert(rec);
    });

    const res = await client().http.raw('GET', '/v1/platform/public-key');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(before);
    // and it is the key challenges are signed with
    expect(signingKeys.sign({ a: 1 }).signingKeyId).toBe(before.signingKeyId);

    const logged = lines.find((l) => l.msg === 'signing key refresh failed; the current key stays in use and is answered');
    expect(logged, JSON.stringify(lines)).toBeDefined();
    expect(logged!.level).toBe(50);
    expect(logged!.signingKeyId).toBe(before.signingKeyId);
    expect(JSON.stringify(logged!.err)).toContain(`keys/${rec.id}.pem`);
  });
});

describe("an AppError('INTERNAL') from a route (a provider without a settlement wallet)", () => {
  it('answers 500 INTERNAL "internal error" with an errorId; the log has the id and the real message', async () => {
    const seller = creds.provider.id;
    const capabilityId = await createCapability({ gw } as Parameters<typeof createCapability>[0], seller);
    // an invariant broken behind the gateway's back
    sqliteOf(gw).prepare('UPDATE tenants SET settlement_wallet_id = NULL WHERE id = ?').run(seller);

    const res = await client(creds.provider.apiKey).http.raw('POST', '/v1/x402/challenge', { body: { capabilityId } });
    expect(res.status).toBe(500);
    const body = res.body as { error: { details: { errorId: string } }; errorId: string };
    expect(body).toEqual({ error: { code: 'INTERNAL', message: 'internal error', details: { errorId: expect.stringMatching(/^err_/) } }, errorId: body.error.details.errorId });
    expect(JSON.stringify(body)).not.toContain('settlement wallet');

    const logged = lines.find((l) => l.errorId === body.errorId);
    expect(logged, JSON.stringify(lines)).toBeDefined();
    expect(logged!.level).toBe(50);
    expect(JSON.stringify(logged!.err)).toContain(`provider ${seller} has no settlement wallet`);
  });
});
