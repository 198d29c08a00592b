/**
 * The CLI against a real gateway when things around it go wrong: logins racing on one
 * config.json, a reply lost after the gateway created a wallet, key files that are not
 * what they should be, a damaged ./.agentpay, and a damaged receipt-key cache.
 */
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caPath } from '../../../src/cli/local-gateway.js';
import { loadProfiles } from '../../../src/cli/profile.js';
import { gatewayCacheKey, verifyReceipt } from '../../../src/cli/receipts-verify.js';
import { generateEd25519 } from '../../../src/core/ed25519.js';
import { DevCredentialsError, readDevCredentials } from '../../../src/gateway/dev-credentials.js';
import { startGateway } from '../../../src/gateway/server.js';
import { createBuyer } from '../../../packages/sdk/src/buyer/index.js';
import type { Receipt } from '../../../packages/sdk/src/types.js';
import { fetchTrusting, fundedAgent, publish, startFastifySeller, type RunningSeller } from '../../e2e/helpers.js';
import { backendOptions, startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { cli, gatewayProxy, json, removeTempDirs, tempDir, type CliResult } from '../helpers.js';

let t: TestGateway;
let seller: RunningSeller;
let env: Record<string, string>;

beforeAll(async () => {
  t = await startTestGateway();
  env = { AGENTPAY_GATEWAY_URL: t.baseUrl, AGENTPAY_CA: caPath(t.dataDir), AGENTPAY_API_KEY: t.creds.workspace.apiKey };
  seller = await startFastifySeller(t, { price100: await publish(t, '100'), price1: await publish(t, '1') });
});
afterAll(async () => {
  await seller?.close();
  await t?.close();
  removeTempDirs();
});

const errorOf = (r: CliResult) => json<{ error: { code: string; message: string; details: Record<string, unknown> } }>(r).error;
const tryOf = (r: CliResult) => r.stderr.split('\n').find((l) => l.startsWith('Try: ')) ?? '';

describe('agentpay login, many at once', () => {
  it('saves every profile', async () => {
    const configDir = tempDir();
    const runs = await Promise.all(Array.from({ length: 8 }, (_, i) => cli(['login', '--profile', `p${i}`, '--json'], { configDir, env })));
    for (const r of runs) expect(r.exitCode, r.stderr).toBe(0);
    expect(Object.keys(loadProfiles({ AGENTPAY_CONFIG_DIR: configDir }).profiles).sort()).toEqual(['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7']);
  });
});

/** A proxy to the gateway that cuts POST /v1/wallets after the gateway answered: the wallet exists, the CLI never hears of it. */
const replyDroppingProxy = () => gatewayProxy(t, (req) => (req.method === 'POST' && req.url === '/v1/wallets' ? 'drop-reply' : 'forward'));

describe('agentpay wallets create', () => {
  const configDir = tempDir();
  const run = (...args: string[]) => cli(['wallets', 'create', '--owner-type', 'agent', ...args, '--json'], { configDir, env });
  const walletCount = async () => (await t.workspace.wallets.list()).length;

  it('keeps a generated key when the reply is lost after the gateway registered the wallet, and says where it is', async () => {
    const proxy = await replyDroppingProxy();
    try {
      const keyFile = join(configDir, 'lost-reply.pem');
      const r = await run('--owner-id', 'lost-reply', '--generate-key', '--key-file', keyFile, '--gateway-url', proxy.url);
      expect(r.exitCode).toBe(3);
      const error = errorOf(r);
      expect(error).toMatchObject({ code: 'GATEWAY_UNREACHABLE', details: { keyFile } });
      expect(error.message).toContain(`the private key is kept at ${keyFile}`);
      expect(existsSync(keyFile)).toBe(true);
      // the wallet was created, with the kept key's public half: it can still sign
      const wallet = (await t.workspace.wallets.list()).find((w) => w.ownerId === 'lost-reply');
      const { createPrivateKey, createPublicKey } = await import('node:crypto');
      expect(wallet?.publicKeyPem).toBe(createPublicKey(createPrivateKey(readFileSync(keyFile, 'utf8'))).export({ type: 'spki', format: 'pem' }).toString());

      const human = await cli(['wallets', 'create', '--owner-type', 'agent', '--owner-id', 'lost-reply-2', '--generate-key', '--key-file', join(configDir, 'lost-2.pem'), '--gateway-url', proxy.url], { configDir, env });
      expect(tryOf(human)).toContain('agentpay wallets list');
    } finally {
      await proxy.close();
    }
  });

  it('names --key-file when its directory is missing or is a file, and creates nothing', async () => {
    const before = await walletCount();
    const missing = await run('--owner-id', 'x', '--generate-key', '--key-file', join(configDir, 'nodir', 'k.pem'));
    expect(missing.exitCode).toBe(2);
    expect(errorOf(missing)).toMatchObject({ code: 'USAGE', details: { flag: '--key-file' } });
    expect(errorOf(missing).message).toContain(`${join(configDir, 'nodir')} does not exist`);

    writeFileSync(join(configDir, 'afile'), 'x');
    const underFile = await run('--owner-id', 'x', '--generate-key', '--key-file', join(configDir, 'afile', 'k.pem'));
    expect(underFile.exitCode).toBe(2);
    expect(errorOf(underFile)).toMatchObject({ code: 'USAGE', details: { flag: '--key-file' } });
    expect(errorOf(underFile).message).toContain(`${join(configDir, 'afile')} is not a directory`);
    expect(await walletCount()).toBe(before);
  });

  it('names --public-key-file when it is a directory', async () => {
    mkdirSync(join(configDir, 'keydir'));
    const r = await run('--owner-id', 'x', '--public-key-file', join(configDir, 'keydir'));
    expect(r.exitCode).toBe(2);
    expect(errorOf(r)).toMatchObject({ code: 'USAGE', details: { flag: '--public-key-file' } });
    expect(errorOf(r).message).toContain('is a directory');
  });
});

describe('a damaged ./.agentpay/dev-credentials.json', () => {
  const damaged: Array<[string, (path: string) => void]> = [
    ['not JSON', (p) => writeFileSync(p, '{"operatorKey": "ap_o_')],
    ['empty', (p) => writeFileSync(p, '')],
    ['{}', (p) => writeFileSync(p, '{}')],
    ['a directory', (p) => mkdirSync(p)],
  ];

  for (const [what, damage] of damaged) {
    it(`is not read when flags give the gateway and key, and otherwise is a clear error naming it (${what})`, async () => {
      const cwd = tempDir();
      mkdirSync(join(cwd, '.agentpay'));
      const path = join(cwd, '.agentpay', 'dev-credentials.json');
      damage(path);
      expect(() => readDevCredentials(join(cwd, '.agentpay'))).toThrow(DevCredentialsError);

      const configDir = tempDir();
      const flagged = await cli(['whoami', '--gateway-url', t.baseUrl, '--api-key', t.creds.workspace.apiKey, '--ca', caPath(t.dataDir), '--json'], { configDir, cwd });
      expect(flagged.exitCode, flagged.stderr).toBe(0);

      for (const args of [['whoami'], ['whoami', '--data-dir', '.agentpay']]) {
        const r = await cli(args, { configDir, cwd });
        expect(r.exitCode, r.stderr).toBe(1);
        expect(r.stderr).toContain(`error DEV_CREDENTIALS_INVALID: ${path}`);
        expect(tryOf(r)).toContain('agentpay dev');
      }
    });
  }
});

describe('agentpay dev on a data dir with a damaged dev-credentials.json', () => {
  it('stops with DEV_CREDENTIALS_INVALID naming the file (exit 1), not a bug report', async () => {
    // a data dir a sandbox gateway has run on, then its credentials file damaged
    const dataDir = join(tempDir(), 'dev');
    await (await startGateway({ ...(await backendOptions(dataDir)), dataDir, tls: false, httpPort: null, port: 0, config: { mode: 'sandbox' } })).close();
    writeFileSync(join(dataDir, 'dev-credentials.json'), '{"operatorKey": "ap_o_');
    const r = await cli(['dev', '--data-dir', dataDir, '--port', '0', '--http-port', '0', '--json'], { configDir: tempDir() });
    expect(r.exitCode, r.stdout + r.stderr).toBe(1);
    expect(json(r).error).toMatchObject({ code: 'DEV_CREDENTIALS_INVALID' });
    expect(json(r).error.message).toContain(join(dataDir, 'dev-credentials.json'));
  });
});

describe('agentpay receipts verify with a damaged receipt-key cache', () => {
  let receipt: Receipt;
  let receiptFile: string;
  const configDir = tempDir();
  const cacheFile = join(configDir, 'receipt-keys.json');

  beforeAll(async () => {
    const agent = await fundedAgent(t, '1000');
    const buyer = createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: agent.walletId, privateKeyPem: agent.privateKeyPem, fetch: fetchTrusting(t.ca) });
    const res = await buyer.fetch(`${seller.url}/forecast?city=Faro`);
    receipt = res.receipt!;
    receiptFile = join(configDir, 'receipt.json');
    writeFileSync(receiptFile, JSON.stringify(receipt));
  });

  const cacheWith = (publicKeyPem: string) =>
    writeFileSync(cacheFile, JSON.stringify({ [gatewayCacheKey(t.baseUrl)]: { [receipt.signingKeyId]: { publicKeyPem, fetchedAt: new Date().toISOString() } } }));
  const cachedKey = () => JSON.parse(readFileSync(cacheFile, 'utf8'))[gatewayCacheKey(t.baseUrl)][receipt.signingKeyId].publicKeyPem as string;
  const verify = (file: string) => cli(['receipts', 'verify', file, '--json'], { configDir, env });

  it('takes an unparsable cached key as a miss: fetches the key again and rewrites the cache', async () => {
    cacheWith('garbage');
    const r = await verify(receiptFile);
    expect(r.exitCode, r.stdout).toBe(0);
    expect(json(r)).toMatchObject({ valid: true, key: { from: 'gateway' } });
    expect(cachedKey()).toContain('BEGIN PUBLIC KEY');
  });

  it('on a mismatch with a cached key, checks once more with the key fetched from the gateway before blaming the receipt', async () => {
    cacheWith(generateEd25519().publicKeyPem); // another key under this key id
    const r = await verify(receiptFile);
    expect(r.exitCode, r.stdout).toBe(0);
    expect(json(r)).toMatchObject({ valid: true, checks: { signature: 'valid' }, key: { from: 'gateway' } });
    const good = cachedKey();
    expect((await verify(receiptFile)).exitCode).toBe(0); // and the cache is right again
    expect(cachedKey()).toBe(good);
  });

  it('still calls a changed receipt a SIGNATURE_MISMATCH when the fetched key agrees with the cache', async () => {
    const changed = join(configDir, 'changed.json');
    writeFileSync(changed, JSON.stringify({ ...receipt, amount: { ...receipt.amount, amountMinor: '1' } }));
    const r = await verify(changed);
    expect(r.exitCode).toBe(1);
    expect(json(r)).toMatchObject({ valid: false, checks: { signature: 'mismatch' }, problems: [{ code: 'SIGNATURE_MISMATCH' }] });
  });

  it('keeps a mismatch with a cached key when the gateway cannot be reached to fetch it again, and says so', async () => {
    const refused = new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
    const verdict = await verifyReceipt({
      value: receipt,
      source: 'test',
      key: async () => ({ publicKeyPem: generateEd25519().publicKeyPem, from: 'cache', baseUrl: t.baseUrl, refetch: () => Promise.reject(refused) }),
    });
    expect(verdict).toMatchObject({ valid: false, checks: { signature: 'mismatch' }, key: { from: 'cache' } });
    expect(verdict.problems[0]!.message).toContain('could not be reached to fetch that key again (ECONNREFUSED)');
    expect(verdict.key).not.toHaveProperty('refetch');
  });
});

describe('agentpay buy --key-file', () => {
  const configDir = tempDir();
  const file = (name: string, content: string) => {
    const path = join(configDir, name);
    writeFileSync(path, content, { mode: 0o600 });
    return path;
  };

  it('checks the key before any request: a public key, not PEM, RSA, truncated, empty, a directory (exit 2, naming --key-file)', async () => {
    const agent = await fundedAgent(t, '1000');
    const pem = agent.privateKeyPem;
    const payments = seller.log.paymentsReceived;
    mkdirSync(join(configDir, 'dir.pem'));
    const bad: Array<[string, string, RegExp]> = [
      ['public', file('public.pem', agent.publicKeyPem), /public key/],
      ['text', file('text.pem', 'not a key'), /not a PEM private key/],
      ['rsa', file('rsa.pem', generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()), /rsa/],
      ['truncated', file('truncated.pem', pem.slice(0, pem.length / 2)), /not a PEM private key/],
      ['empty', file('empty.pem', ''), /is empty/],
      ['directory', join(configDir, 'dir.pem'), /is a directory/],
    ];
    for (const [what, keyFile, reason] of bad) {
      const r = await cli(['buy', `${seller.url}/forecast`, '--wallet', agent.walletId, '--key-file', keyFile, '--json'], { configDir, env });
      expect(r.exitCode, `${what}: ${r.stdout}${r.stderr}`).toBe(2);
      const error = errorOf(r);
      expect(error, what).toMatchObject({ code: 'USAGE', details: { flag: '--key-file' } });
      expect(error.message, what).toMatch(reason);
      expect(error.message, what).toContain(`--key-file: ${keyFile}`);
    }
    expect(seller.log.paymentsReceived).toBe(payments);
    expect((await t.workspace.wallets.balance(agent.walletId)).balanceMinor).toBe('1000');
  });

  it("says the key file is not the wallet's key when the gateway refuses the proof's signature", async () => {
    const agent = await fundedAgent(t, '1000');
    const other = file('other.pem', generateEd25519().privateKeyPem);
    const r = await cli(['buy', `${seller.url}/forecast`, '--wallet', agent.walletId, '--key-file', other], { configDir, env });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('error FORBIDDEN');
    expect(tryOf(r)).toContain(`${other} is not the key registered on wallet ${agent.walletId}`);
    expect(tryOf(r)).not.toContain('another tenant');
    expect((await t.workspace.wallets.balance(agent.walletId)).balanceMinor).toBe('1000');
  });
});
