/**
 * ensureDevCredentials on a later start of a sandbox data dir: the saved keys are reused while
 * they authenticate; one revoked or expired meanwhile is replaced by a new key of the same
 * tenant, and dev-credentials.json is rewritten (0600) with it, so `agentpay dev` never hands
 * out a key the gateway refuses.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { credentialsPath, ensureDevCredentials, readDevCredentials } from '../../src/gateway/dev-credentials.js';
import { hashKey } from '../../src/domain/tenancy/api-keys.js';
import { startTestGateway, type TestGateway, sqliteOf } from '../helpers/gateway.js';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function dataDirWithCredentials() {
  const dataDir = mkdtempSync(join(tmpdir(), 'agentpay-devcreds-'));
  cleanup.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestGateway({ dataDir });
  return { dataDir, first };
}

async function restart(dataDir: string): Promise<TestGateway> {
  const t = await startTestGateway({ dataDir }); // runs ensureDevCredentials, as `agentpay dev` does
  cleanup.push(() => t.close());
  return t;
}

const keyCount = (t: TestGateway) => Number((sqliteOf(t.gw).prepare('SELECT count(*) AS n FROM api_keys').get() as { n: bigint }).n);

describe('ensureDevCredentials on a later start', () => {
  it('replaces a revoked workspace key with a new one of the same workspace, rewrites the file 0600, keeps the other keys', async () => {
    const { dataDir, first } = await dataDirWithCredentials();
    const before = first.creds;
    const me = await first.workspace.auth.whoami();
    await first.workspace.keys.revoke(me.key.id);
    await first.close();

    const t = await restart(dataDir);
    expect(t.creds.workspace.id).toBe(before.workspace.id);
    expect(t.creds.workspace.apiKey).not.toBe(before.workspace.apiKey);
    expect(t.creds.workspace.apiKey).toMatch(/^ap_w_/);
    expect((await t.workspace.auth.whoami()).tenant.id).toBe(before.workspace.id);
    expect(t.creds.operatorKey).toBe(before.operatorKey);
    expect(t.creds.provider).toEqual(before.provider);

    expect(readDevCredentials(dataDir)).toEqual(t.creds);
    expect(statSync(credentialsPath(dataDir)).mode & 0o777).toBe(0o600);
  });

  it('replaces an expired operator key and a revoked provider key', async () => {
    const { dataDir, first } = await dataDirWithCredentials();
    const before = first.creds;
    const raw = sqliteOf(first.gw);
    raw.prepare('UPDATE api_keys SET expires_at = 1 WHERE key_hash = ?').run(hashKey(before.operatorKey));
    raw.prepare('UPDATE api_keys SET revoked_at = 1 WHERE key_hash = ?').run(hashKey(before.provider.apiKey));
    await first.close();

    const t = await restart(dataDir);
    expect(t.creds.operatorKey).not.toBe(before.operatorKey);
    expect(t.creds.provider).toMatchObject({ id: before.provider.id, walletId: before.provider.walletId });
    expect(t.creds.provider.apiKey).not.toBe(before.provider.apiKey);
    expect(t.creds.workspace).toEqual(before.workspace);
    expect((await t.operator.auth.whoami()).tenant.kind).toBe('operator');
    expect((await t.provider.auth.whoami()).tenant.id).toBe(before.provider.id);
    expect(readDevCredentials(dataDir)).toEqual(t.creds);
  });

  it('reuses keys that still work: no new key, the file unchanged', async () => {
    const { dataDir, first } = await dataDirWithCredentials();
    await first.close();
    const text = readFileSync(credentialsPath(dataDir), 'utf8');
    const t = await restart(dataDir);
    const keys = keyCount(t);
    expect(await ensureDevCredentials(t.gw.services.ctx, dataDir)).toEqual(t.creds);
    expect(keyCount(t)).toBe(keys);
    expect(readFileSync(credentialsPath(dataDir), 'utf8')).toBe(text);
  });
});
