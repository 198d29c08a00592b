/**
 * Several gateways on one database: when one rotates the platform signing key, the
 * others follow on their refresh timer (SigningKeys.startRefresh, started by
 * startGateway) without a restart: they sign with the new key and report it in
 * /health. A refresh that fails keeps the key in use, is logged, and is tried again.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { generateEd25519, verifyObject } from '../../src/core/ed25519.js';
import { startGateway, type RunningGateway } from '../../src/gateway/server.js';
import { backendOptions, testBackend } from '../helpers/gateway.js';
import { AgentpayClient } from '../../packages/sdk/src/client/index.js';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

/** Two gateways on the same data directory (database, keys, certificate); the second refreshes every 20 ms. */
async function twoInstances(logLines: string[] = []): Promise<{ first: RunningGateway; second: RunningGateway; dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'agentpay-key-refresh-'));
  cleanup.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startGateway({ ...(await backendOptions(dataDir)), dataDir, port: 0, httpPort: null, signingKeyRefreshMs: 0 });
  cleanup.push(() => first.close());
  const logger = { level: 'error', stream: new Writable({ write: (chunk, _enc, done) => (logLines.push(String(chunk)), done()) }) };
  const second = await startGateway({ ...(await backendOptions(dataDir)), dataDir, port: 0, httpPort: null, signingKeyRefreshMs: 20, logger });
  cleanup.push(() => second.close());
  return { first, second, dataDir };
}

function health(gw: RunningGateway) {
  return new AgentpayClient({ gatewayUrl: gw.baseUrl, ca: gw.tls!.ca }).platform.health();
}

const challenge = { capabilityId: 'cap_1', priceMinor: '100', nonce: 'n1' };

describe('signing key refresh across instances sharing a database', () => {
  it('another instance follows a rotation within its refresh interval: signs with the new key and reports it', async () => {
    const { first, second } = await twoInstances();
    const old = second.services.signingKeys.currentKeyId;
    expect(first.services.signingKeys.currentKeyId).toBe(old);

    const rotated = await first.services.signingKeys.rotate();
    expect((await health(first)).instance).toBe(rotated.id);

    await vi.waitFor(async () => expect((await health(second)).instance).toBe(rotated.id), { timeout: 5000, interval: 20 });
    const signed = second.services.signingKeys.sign(challenge);
    expect(signed.signingKeyId).toBe(rotated.id);
    expect(verifyObject(rotated.publicKeyPem, signed)).toBe(true);
    expect(second.services.signingKeys.currentPublicKeyPem).toBe(rotated.publicKeyPem);
  });

  // sqlite-only: a private key missing from DATA_DIR/keys; a sandbox on PostgreSQL keeps its keys in the database (test/store/signing-keys.test.ts)
  it.skipIf(testBackend() === 'postgres')('keeps signing with its key and logs the reason while the new private key is missing, then follows once it is there', async () => {
    const logLines: string[] = [];
    const { first, second, dataDir } = await twoInstances(logLines);
    const old = second.services.signingKeys.currentKeyId;

    // another instance rotates, and the new private half is not (yet) in this keys directory:
    // the rows are written as rotate() writes them, the file not at all (deleting it after a
    // real rotate() would race with the 20 ms refresh, which may load it first)
    const pair = generateEd25519();
    const { ctx } = first.services;
    const rotated = { id: ctx.ids.next('signingKey'), publicKeyPem: pair.publicKeyPem, status: 'current' as const, createdAt: ctx.clock.now(), retiredAt: null };
    await ctx.store.tx(async (r) => {
      const current = await r.signingKeys.current();
      if (current) await r.signingKeys.retire(current.id, rotated.createdAt);
      await r.signingKeys.insert(rotated);
    });
    const keyFile = join(dataDir, 'keys', `${rotated.id}.pem`);
    const pem = pair.privateKeyPem;

    await vi.waitFor(() => expect(logLines.join('')).toContain(`the private key file of signing key ${rotated.id} (keys/${rotated.id}.pem in the data directory) is missing`), { timeout: 5000, interval: 20 });
    expect(logLines.join('')).toContain('signing key refresh failed');
    expect((await health(second)).instance).toBe(old);
    expect(second.services.signingKeys.sign(challenge).signingKeyId).toBe(old);

    writeFileSync(keyFile, pem, { mode: 0o600 });
    await vi.waitFor(async () => expect((await health(second)).instance).toBe(rotated.id), { timeout: 5000, interval: 20 });
    expect(second.services.signingKeys.sign(challenge).signingKeyId).toBe(rotated.id);
  });
});
