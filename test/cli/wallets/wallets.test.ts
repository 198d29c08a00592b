/**
 * `agentpay wallets ...` against a real in-process HTTPS gateway. The CLI finds it
 * through AGENTPAY_GATEWAY_URL / AGENTPAY_CA / AGENTPAY_API_KEY.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateEd25519 } from '../../../src/core/ed25519.js';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { cli, json, removeTempDirs, tempDir, gatewayEnv } from '../helpers.js';

let t: TestGateway;
const configDir = tempDir();
const work = tempDir();
let env: Record<string, string>;

beforeAll(async () => {
  t = await startTestGateway();
  env = gatewayEnv(t, t.creds.workspace.apiKey);
});
afterAll(async () => {
  await t.close();
  removeTempDirs();
});

const run = (...args: string[]) => cli(args, { configDir, env, cwd: work });

describe('agentpay wallets create', () => {
  it('--generate-key writes the private key at mode 0600 and registers its public half', async () => {
    const keyFile = join(work, 'researcher.pem');
    const r = await run('wallets', 'create', '--owner-type', 'agent', '--owner-id', 'researcher', '--generate-key', '--key-file', keyFile, '--json');
    expect(r.exitCode, r.stderr).toBe(0);
    const { wallet, keyFile: written } = json(r);
    expect(written).toBe(keyFile);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const derivedPublic = createPublicKey(createPrivateKey(readFileSync(keyFile, 'utf8'))).export({ type: 'spki', format: 'pem' }).toString();
    expect((await t.workspace.wallets.get(wallet.id)).publicKeyPem).toBe(derivedPublic);
  });

  it('refuses to overwrite an existing key file, and creates no wallet', async () => {
    const keyFile = join(work, 'taken.pem');
    writeFileSync(keyFile, 'precious');
    const before = (await t.workspace.wallets.list()).length;
    const r = await run('wallets', 'create', '--owner-type', 'agent', '--owner-id', 'x', '--generate-key', '--key-file', keyFile);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('error KEY_FILE_EXISTS');
    expect(readFileSync(keyFile, 'utf8')).toBe('precious');
    expect((await t.workspace.wallets.list()).length).toBe(before);
  });

  it('registers a key from --public-key-file', async () => {
    const pair = generateEd25519();
    const pub = join(work, 'held.pub.pem');
    writeFileSync(pub, pair.publicKeyPem);
    const r = await run('wallets', 'create', '--owner-type', 'agent', '--owner-id', 'held', '--public-key-file', pub, '--json');
    expect(r.exitCode, r.stderr).toBe(0);
    expect(json(r).wallet.publicKeyPem).toBe(pair.publicKeyPem);
  });

  it('removes the generated key file when the gateway refuses the wallet', async () => {
    const keyFile = join(work, 'refused.pem');
    // A key one character off; the character changed is always a different one (a key ending in Z stays valid otherwise).
    const key = t.creds.provider.apiKey;
    const wrongKey = key.slice(0, -1) + (key.endsWith('Z') ? 'Y' : 'Z');
    const r = await run('wallets', 'create', '--owner-type', 'agent', '--owner-id', 'x', '--generate-key', '--key-file', keyFile, '--api-key', wrongKey);
    expect(r.exitCode, r.stderr).toBe(4);
    expect(existsSync(keyFile)).toBe(false);
  });
});

describe('agentpay wallets fund / balance / ledger / show / list', () => {
  let walletId: string;
  beforeAll(async () => {
    walletId = (await t.newAgentWallet(t.workspace, 'buyer')).walletId;
  });

  it('funds in integer minor units and prints string amounts', async () => {
    const r = await run('wallets', 'fund', walletId, '--amount', '150', '--json');
    expect(r.exitCode, r.stderr).toBe(0);
    const body = json(r);
    expect(body.entry).toMatchObject({ walletId, amountMinor: '150', type: 'fund' });
    expect(body.balance).toEqual({ balanceMinor: '150', availableMinor: '150', currency: 'USD' });
  });

  it('refuses --amount 1.50 with exit 1, says amounts are minor units, and moves no money', async () => {
    const r = await run('wallets', 'fund', walletId, '--amount', '1.50');
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/^error VALIDATION_FAILED: --amount: .*integer minor units/);
    expect(await t.workspace.wallets.ledger(walletId)).toHaveLength(1);
  });

  it('reports balance and ledger as JSON with string amounts', async () => {
    await t.workspace.wallets.fund(walletId, '50');
    const balance = json(await run('wallets', 'balance', walletId, '--json'));
    expect(balance).toEqual({ balanceMinor: '200', availableMinor: '200', currency: 'USD' });
    const { entries } = json(await run('wallets', 'ledger', walletId, '--json'));
    expect(entries.map((e: { amountMinor: unknown }) => e.amountMinor)).toEqual(['150', '50']);
    expect(entries.map((e: { balanceAfterMinor: unknown }) => e.balanceAfterMinor)).toEqual(['150', '200']);
  });

  it('shows one wallet with its balance, and lists only the caller\'s wallets', async () => {
    const shown = json(await run('wallets', 'show', walletId, '--json'));
    expect(shown.wallet).toMatchObject({ id: walletId, ownerType: 'agent', ownerId: 'buyer', balance: { balanceMinor: '200' } });
    const listed = json(await run('wallets', 'list', '--json'));
    expect(listed.wallets.map((w: { id: string }) => w.id)).toContain(walletId);
    const asProvider = json(await run('wallets', 'list', '--json', '--api-key', t.creds.provider.apiKey));
    expect(asProvider.wallets.map((w: { id: string }) => w.id)).toEqual([t.creds.provider.walletId]);
  });

  it('freezes and unfreezes', async () => {
    expect(json(await run('wallets', 'freeze', walletId, '--json')).wallet.frozen).toBe(true);
    expect((await t.workspace.wallets.get(walletId)).frozen).toBe(true);
    expect(json(await run('wallets', 'unfreeze', walletId, '--json')).wallet.frozen).toBe(false);
  });

  it("answers another tenant's wallet with WALLET_NOT_FOUND and a next step", async () => {
    const other = await t.newWorkspace();
    const r = await run('wallets', 'balance', walletId, '--api-key', other.apiKey);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('error WALLET_NOT_FOUND');
    expect(r.stderr).toContain('Try: list the wallets this key can see: agentpay wallets list');
  });

  it('prints the error envelope on stdout with --json', async () => {
    const r = await run('wallets', 'balance', 'wal_nope', '--json');
    expect(r.exitCode).toBe(1);
    expect(json(r)).toEqual({ error: { code: 'WALLET_NOT_FOUND', message: expect.any(String), details: expect.objectContaining({ status: 404 }) } });
  });
});
