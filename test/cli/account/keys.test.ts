/** `agentpay keys ...` against a real in-process HTTPS gateway. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_SCOPES } from '../../../src/domain/tenancy/scopes.js';
import { keyTable, revokedText } from '../../../src/cli/keys.js';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { cli, json, removeTempDirs, tempDir, gatewayEnv } from '../helpers.js';

let t: TestGateway;
const configDir = tempDir();
let env: Record<string, string>;

beforeAll(async () => {
  t = await startTestGateway();
  env = gatewayEnv(t, t.creds.workspace.apiKey);
});
afterAll(async () => {
  await t.close();
  removeTempDirs();
});

const run = (...args: string[]) => cli(args, { configDir, env });

describe('agentpay keys create', () => {
  it('--for-agent makes a key with the agent preset, without approvals:write, and shows it once with a warning', async () => {
    const r = await run('keys', 'create', '--for-agent', '--name', 'research-agent', '--json');
    expect(r.exitCode, r.stderr).toBe(0);
    const { apiKey } = json(r);
    expect(apiKey.key).toMatch(/^ap_w_/);
    expect(apiKey.name).toBe('research-agent');
    expect([...apiKey.scopes].sort()).toEqual([...AGENT_SCOPES].sort());
    expect(apiKey.scopes).not.toContain('approvals:write');
    expect(r.stderr).toContain('shown once');
    const me = await t.client(apiKey.key).auth.whoami();
    expect(me.tenant.id).toBe(t.creds.workspace.id);
  });

  it('--scopes and --expires-in make a narrower key that expires', async () => {
    const before = Date.now();
    const r = await run('keys', 'create', '--scopes', 'wallets:read,receipts:read', '--expires-in', '30d', '--json');
    expect(r.exitCode, r.stderr).toBe(0);
    const { apiKey } = json(r);
    expect(apiKey.scopes).toEqual(['wallets:read', 'receipts:read']);
    const expires = Date.parse(apiKey.expiresAt);
    expect(expires - before).toBeGreaterThanOrEqual(30 * 86_400_000 - 60_000);
    expect(expires - before).toBeLessThanOrEqual(30 * 86_400_000 + 60_000);
  });

  it('refuses --for-agent with --scopes, and a malformed --expires-in, as usage errors (exit 2)', async () => {
    const both = await run('keys', 'create', '--for-agent', '--scopes', 'wallets:read');
    expect(both.exitCode).toBe(2);
    const badDuration = await run('keys', 'create', '--expires-in', '30 days');
    expect(badDuration.exitCode).toBe(2);
    expect(badDuration.stderr).toContain('--expires-in');
  });

  it('tells a key without keys:write which scope it lacks and how to get one', async () => {
    const agent = await t.workspace.keys.create({ preset: 'agent' });
    const r = await run('keys', 'create', '--api-key', agent.apiKey.key);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('error FORBIDDEN:');
    expect(r.stderr).toContain('keys:write');
    expect(r.stderr).toContain('Try: create a key with that scope: agentpay keys create --scopes keys:write');
  });
});

describe('agentpay keys list / revoke', () => {
  it('lists the tenant keys without key material; a revoked key then gets exit 4 from whoami', async () => {
    const created = json(await run('keys', 'create', '--name', 'short-lived', '--json')).apiKey;
    const listed = json(await run('keys', 'list', '--json'));
    const mine = listed.keys.find((k: { id: string }) => k.id === created.id);
    expect(mine).toMatchObject({ name: 'short-lived', revokedAt: null });
    expect(JSON.stringify(listed)).not.toContain(created.key);

    const ok = await run('whoami', '--api-key', created.key, '--json');
    expect(ok.exitCode, ok.stderr).toBe(0);

    const revoked = await run('keys', 'revoke', created.id, '--json');
    expect(revoked.exitCode, revoked.stderr).toBe(0);
    expect(json(revoked).key.revokedAt).toEqual(expect.any(String));

    const after = await run('whoami', '--api-key', created.key);
    expect(after.exitCode).toBe(4);
    expect(after.stderr).toMatch(/^error UNAUTHORIZED: .*revoked/);
    expect(after.stderr).toContain('Try: log in with a valid key: agentpay login');
  });

  it('shows who made each key, and says how many keys a revoke took with it', async () => {
    const parent = json(await run('keys', 'create', '--name', 'parent', '--json')).apiKey;
    const child = (await t.client(parent.key).keys.create({ name: 'child' })).apiKey;
    const listed = json(await run('keys', 'list', '--json'));
    expect(listed.keys.find((k: { id: string }) => k.id === child.id)).toMatchObject({ parentKeyId: parent.id });
    // on a terminal: a MADE BY column
    const table = keyTable(listed.keys);
    expect(table).toContain('MADE BY');
    expect(table.split('\n').find((l) => l.startsWith(child.id))).toContain(parent.id);

    const revoked = await run('keys', 'revoke', parent.id, '--json');
    expect(revoked.exitCode, revoked.stderr).toBe(0);
    const res = json(revoked);
    expect(res).toMatchObject({ revokedCount: 2, key: { id: parent.id } });
    expect(revokedText(res)).toContain(`Revoked 2 keys: this one and 1 made from it (${child.id})`);
    const again = json(await run('keys', 'revoke', parent.id, '--json'));
    expect(again).toMatchObject({ revokedCount: 0, revokedKeyIds: [] });
    expect(revokedText(again)).toContain('Already revoked');
  });

  it('needs the key id as an argument (usage error, exit 2)', async () => {
    const r = await run('keys', 'revoke');
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('error USAGE');
  });
});

describe('agentpay keys rotate', () => {
  it("rotates the platform signing key with the operator key and prints the new signingKeyId", async () => {
    const before = (await t.client().platform.publicKey()).signingKeyId;
    const r = await run('keys', 'rotate', '--api-key', t.creds.operatorKey, '--json');
    expect(r.exitCode, r.stderr).toBe(0);
    const { signingKeyId } = json(r);
    expect(signingKeyId).toMatch(/^sk_/);
    expect(signingKeyId).not.toBe(before);
    expect((await t.client().platform.publicKey()).signingKeyId).toBe(signingKeyId);
  });

  it('is refused for a workspace key', async () => {
    const r = await run('keys', 'rotate');
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('error FORBIDDEN');
  });
});
