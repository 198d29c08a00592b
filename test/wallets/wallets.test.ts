/**
 * The wallet routes on a sandbox gateway: happy paths and refusals, with the ledger
 * checked after every money path, failures included.
 */
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { generateEd25519 } from '../../src/core/ed25519.js';
import { PLATFORM_REVENUE_WALLET_ID } from '../../src/domain/tenancy/tenants.js';
import { startTestGateway } from '../helpers/gateway.js';
import { call, changedTables, snapshotDb } from '../helpers/matrix.js';
import { expectConsistent, expectLedger } from './ledger-checks.js';

const t = await startTestGateway();
afterAll(() => t.close());

const ws = () => t.creds.workspace.apiKey;
const post = (path: string, body?: unknown, apiKey: string | null = ws()) => call(t, 'POST', path, { apiKey, body });
const get = (path: string, apiKey: string | null = ws()) => call(t, 'GET', path, { apiKey });

/** an ed25519 SPKI PEM whose point is the identity, of order 1 */
const SMALL_ORDER_PEM = `-----BEGIN PUBLIC KEY-----\n${Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from('01'.padEnd(64, '0'), 'hex')]).toString('base64')}\n-----END PUBLIC KEY-----\n`;
/** an agent's key pair, for the refusals of a private key sent as the public one */
const AGENT = generateEd25519();
const RSA_PEM = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' }).toString();

/** Runs `fn` and asserts that no table of the database changed. */
async function writesNothing<T>(fn: () => Promise<T>): Promise<T> {
  const before = snapshotDb(t.dataDir);
  const out = await fn();
  expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
  return out;
}

describe('POST /v1/wallets', () => {
  it('creates an agent wallet with its ed25519 key, active, unfrozen, in USD, with an empty ledger', async () => {
    const pair = generateEd25519();
    const res = await post('/v1/wallets', { ownerType: 'agent', ownerId: '  researcher  ', publicKeyPem: pair.publicKeyPem });
    expect(res.status).toBe(200);
    const w = res.body.wallet as Record<string, unknown>;
    expect(w).toEqual({
      id: expect.stringMatching(/^wal_/), ownerType: 'agent', ownerId: 'researcher', publicKeyPem: pair.publicKeyPem,
      status: 'active', frozen: false, currency: 'USD', createdAt: expect.any(String), updatedAt: w.createdAt,
    });
    await expectLedger(t.workspace, w.id as string, []);
  });

  it('keeps the public key re-encoded from the parsed key, not the text as sent (nothing else the text held is stored)', async () => {
    const pair = generateEd25519();
    const sent = `my agent's key\n${pair.publicKeyPem.replace(/\n/g, '\r\n')}trailing words\n`;
    const w = await t.workspace.wallets.create({ ownerType: 'agent', ownerId: 'careful', publicKeyPem: sent });
    expect(w.publicKeyPem).toBe(pair.publicKeyPem);
    expect((await t.workspace.wallets.get(w.id)).publicKeyPem).toBe(pair.publicKeyPem);
  });

  it('creates a workspace wallet without a key', async () => {
    const w = await t.workspace.wallets.create({ ownerType: 'workspace', ownerId: 'team budget' });
    expect(w).toMatchObject({ ownerType: 'workspace', ownerId: 'team budget', publicKeyPem: null });
  });

  it('ignores a workspaceId in the body: the wallet belongs to the key\'s tenant', async () => {
    const other = await t.newWorkspace();
    const res = await post('/v1/wallets', { ownerType: 'workspace', ownerId: 'x', workspaceId: t.creds.workspace.id }, other.apiKey);
    expect(res.status).toBe(200);
    const id = (res.body.wallet as { id: string }).id;
    expect((await get(`/v1/wallets/${id}`)).status).toBe(404);
    expect((await other.client.wallets.list()).map((w) => w.id)).toContain(id);
  });

  const refusals: [string, Record<string, unknown>, RegExp][] = [
    ['an agent wallet without a key', { ownerType: 'agent', ownerId: 'a' }, /^publicKeyPem: is required for agent wallets/],
    ['a key that is not PEM', { ownerType: 'agent', ownerId: 'a', publicKeyPem: 'not a key' }, /^publicKeyPem: is not a PEM public key/],
    ['an RSA key', { ownerType: 'agent', ownerId: 'a', publicKeyPem: RSA_PEM }, /^publicKeyPem: must be an ed25519 key, got rsa/],
    ['a small-order ed25519 key', { ownerType: 'agent', ownerId: 'a', publicKeyPem: SMALL_ORDER_PEM }, /^publicKeyPem: is a small-order ed25519 point/],
    ['a bad key on a workspace wallet too', { ownerType: 'workspace', ownerId: 'a', publicKeyPem: RSA_PEM }, /^publicKeyPem: must be an ed25519 key/],
    ['a missing ownerId', { ownerType: 'agent', publicKeyPem: generateEd25519().publicKeyPem }, /^ownerId: is required/],
    ['a private key given as the public key', { ownerType: 'agent', ownerId: 'a', publicKeyPem: AGENT.privateKeyPem }, /^publicKeyPem: is a private key: send only its public half/],
    ['a file with both halves', { ownerType: 'agent', ownerId: 'a', publicKeyPem: AGENT.publicKeyPem + AGENT.privateKeyPem }, /^publicKeyPem: is a private key/],
    ['two public keys', { ownerType: 'agent', ownerId: 'a', publicKeyPem: AGENT.publicKeyPem + generateEd25519().publicKeyPem }, /^publicKeyPem: holds more than one PEM block/],
    ['a blank ownerId', { ownerType: 'workspace', ownerId: '   ' }, /^ownerId: must not be empty/],
    ['a missing ownerType', { ownerId: 'a' }, /^ownerType: is required/],
  ];
  for (const [what, body, message] of refusals) {
    it(`refuses ${what} with 400 VALIDATION_FAILED naming the field, and creates nothing`, async () => {
      const res = await writesNothing(() => post('/v1/wallets', body));
      expect(res.status).toBe(400);
      expect(res.body.error?.code).toBe('VALIDATION_FAILED');
      expect(res.body.error?.message).toMatch(message);
    });
  }

  it('refuses a provider key with 403 FORBIDDEN: a provider is paid into its settlement wallet', async () => {
    const res = await writesNothing(() => post('/v1/wallets', { ownerType: 'workspace', ownerId: 'x' }, t.creds.provider.apiKey));
    expect(res.status).toBe(403);
    expect(res.body.error?.code).toBe('FORBIDDEN');
    expect(res.body.error?.message).toContain('settlement wallet');
  });
});

describe('GET /v1/wallets', () => {
  it("lists the workspace's own wallets and none of another tenant's", async () => {
    const mine = await t.newAgentWallet(t.workspace, 'lister');
    const other = await t.newWorkspace();
    const theirs = await t.newAgentWallet(other.client, 'theirs');
    const ids = (await t.workspace.wallets.list()).map((w) => w.id);
    expect(ids).toContain(mine.walletId);
    expect(ids).not.toContain(theirs.walletId);
    expect((await other.client.wallets.list()).map((w) => w.id)).toEqual([theirs.walletId]);
  });

  it("returns a provider key its settlement wallet, and only that", async () => {
    const wallets = await t.provider.wallets.list();
    expect(wallets).toEqual([
      expect.objectContaining({ id: t.creds.provider.walletId, ownerType: 'settlement', ownerId: t.creds.provider.id, publicKeyPem: null, frozen: false, currency: 'USD' }),
    ]);
  });

  it('returns the operator its platform revenue wallet', async () => {
    expect((await t.operator.wallets.list()).map((w) => w.id)).toEqual([PLATFORM_REVENUE_WALLET_ID]);
  });
});

describe('GET /v1/wallets/:id, /balance and /ledger', () => {
  it('return the wallet with its balance, the balance, and every ledger entry with its fields', async () => {
    const { walletId } = await t.newAgentWallet(t.workspace);
    await t.workspace.wallets.fund(walletId, '700', 'ach');
    await t.workspace.wallets.fund(walletId, '300');

    const w = await t.workspace.wallets.get(walletId);
    expect(w).toMatchObject({ id: walletId, ownerType: 'agent', balance: { balanceMinor: '1000', availableMinor: '1000', currency: 'USD' } });
    const entries = await expectLedger(t.workspace, walletId, ['700', '300']);
    expect(entries[0]).toEqual({
      id: expect.stringMatching(/^led_/), walletId, seq: 1, type: 'fund', amountMinor: '700', holdMinor: '0',
      balanceAfterMinor: '700', heldAfterMinor: '0', currency: 'USD', transactionId: null,
      reference: 'sandbox:ach', memo: 'sandbox credit', createdAt: expect.any(String),
    });
    expect(entries[1]).toMatchObject({ seq: 2, reference: 'sandbox', balanceAfterMinor: '1000' });
    expect(Date.parse(entries[1]!.createdAt)).toBeGreaterThanOrEqual(Date.parse(entries[0]!.createdAt));
  });

  it('show the provider its settlement wallet and the operator any wallet', async () => {
    expect((await t.provider.wallets.balance(t.creds.provider.walletId)).currency).toBe('USD');
    const { walletId } = await t.newAgentWallet(t.workspace);
    expect((await t.operator.wallets.get(walletId)).id).toBe(walletId);
  });

  for (const sub of ['', '/balance', '/ledger', '/deposit-addresses']) {
    it(`GET /v1/wallets/:id${sub} answers 404 WALLET_NOT_FOUND for an unknown id and for another tenant's wallet alike`, async () => {
      const other = await t.newWorkspace();
      const theirs = await t.newAgentWallet(other.client);
      for (const id of ['wal_doesnotexist', theirs.walletId, t.creds.provider.walletId]) {
        const res = await get(`/v1/wallets/${id}${sub}`);
        expect(res.status).toBe(404);
        expect(res.body.error).toEqual({ code: 'WALLET_NOT_FOUND', message: `wallet ${id} not found`, details: { id } });
      }
    });
  }
});

describe('POST /v1/wallets/:id/fund (sandbox)', () => {
  it('credits at once and returns the new entry and balance', async () => {
    const { walletId } = await t.newAgentWallet(t.workspace);
    const res = await post(`/v1/wallets/${walletId}/fund`, { amountMinor: '250', rail: 'bank_transfer' });
    expect(res.status).toBe(200);
    expect(res.body.balance).toEqual({ balanceMinor: '250', availableMinor: '250', currency: 'USD' });
    expect(res.body.entry).toMatchObject({ walletId, seq: 1, type: 'fund', amountMinor: '250', reference: 'sandbox:bank_transfer' });
    await expectLedger(t.workspace, walletId, ['250']);
  });

  it('takes the largest amount, 10^15 minor units', async () => {
    const { walletId } = await t.newAgentWallet(t.workspace);
    await t.workspace.wallets.fund(walletId, '1000000000000000');
    await expectLedger(t.workspace, walletId, ['1000000000000000']);
  });

  const bad: [string, unknown, RegExp][] = [
    ['zero', '0', /^amountMinor: must be greater than zero/],
    ['above 10^15', '1000000000000001', /^amountMinor: must be at most 1000000000000000/],
    ['a JSON number', 250, /^amountMinor: must be a string of integer minor units/],
    ['a decimal string', '2.50', /^amountMinor: must be a string of integer minor units/],
    ['a negative string', '-5', /^amountMinor: must be a string of integer minor units/],
  ];
  for (const [what, amountMinor, message] of bad) {
    it(`refuses ${what} with 400 VALIDATION_FAILED naming amountMinor, and the ledger is unchanged`, async () => {
      const { walletId } = await t.newAgentWallet(t.workspace);
      await t.workspace.wallets.fund(walletId, '10');
      const res = await writesNothing(() => post(`/v1/wallets/${walletId}/fund`, { amountMinor }));
      expect(res.status).toBe(400);
      expect(res.body.error?.code).toBe('VALIDATION_FAILED');
      expect(res.body.error?.message).toMatch(message);
      await expectLedger(t.workspace, walletId, ['10']);
    });
  }

  it("refuses another tenant's wallet with 404 WALLET_NOT_FOUND and leaves its ledger alone", async () => {
    const other = await t.newWorkspace();
    const theirs = await t.newAgentWallet(other.client);
    await other.client.wallets.fund(theirs.walletId, '5');
    const res = await writesNothing(() => post(`/v1/wallets/${theirs.walletId}/fund`, { amountMinor: '100' }));
    expect(res.status).toBe(404);
    expect(res.body.error?.code).toBe('WALLET_NOT_FOUND');
    await expectLedger(other.client, theirs.walletId, ['5']);
  });

  it('funds a frozen wallet: freezing blocks outgoing payments only', async () => {
    const { walletId } = await t.newAgentWallet(t.workspace);
    await t.workspace.wallets.freeze(walletId);
    await t.workspace.wallets.fund(walletId, '40');
    await expectLedger(t.workspace, walletId, ['40']);
  });
});

describe('POST /v1/wallets/:id/freeze and /unfreeze', () => {
  it('set and clear the frozen flag, idempotently, without touching the ledger', async () => {
    const { walletId } = await t.newAgentWallet(t.workspace);
    await t.workspace.wallets.fund(walletId, '60');
    const frozen = await t.workspace.wallets.freeze(walletId);
    expect(frozen).toMatchObject({ id: walletId, frozen: true });
    expect(await t.workspace.wallets.get(walletId)).toMatchObject({ frozen: true, updatedAt: frozen.updatedAt });

    // freezing a frozen wallet changes nothing, so it reports the stored record
    const again = await writesNothing(() => t.workspace.wallets.freeze(walletId));
    expect(again).toEqual(frozen);

    const thawed = await t.workspace.wallets.unfreeze(walletId);
    expect(thawed.frozen).toBe(false);
    expect(await t.workspace.wallets.get(walletId)).toMatchObject({ frozen: false, updatedAt: thawed.updatedAt });
    await expectLedger(t.workspace, walletId, ['60']);
  });

  it("refuse another tenant's wallet with 404 WALLET_NOT_FOUND and change nothing", async () => {
    const other = await t.newWorkspace();
    const theirs = await t.newAgentWallet(other.client);
    for (const action of ['freeze', 'unfreeze']) {
      const res = await writesNothing(() => post(`/v1/wallets/${theirs.walletId}/${action}`));
      expect(res.status).toBe(404);
      expect(res.body.error?.code).toBe('WALLET_NOT_FOUND');
    }
    expect((await other.client.wallets.get(theirs.walletId)).frozen).toBe(false);
  });
});

describe('the rail routes on a sandbox gateway (money in: test/rails)', () => {
  it('POST /v1/wallets/:id/topup answers a pending intent and credits nothing until the processor confirms', async () => {
    const { walletId } = await t.newAgentWallet(t.workspace);
    const res = await post(`/v1/wallets/${walletId}/topup`, { amountMinor: '100' });
    expect(res.status).toBe(200);
    expect(res.body.intent).toMatchObject({ status: 'pending', amountMinor: '100', walletId });
    await expectLedger(t.workspace, walletId, []);
  });

  it('POST /v1/wallets/:id/deposit-address with or without a body answers the same address', async () => {
    const { walletId } = await t.newAgentWallet(t.workspace);
    const a = await post(`/v1/wallets/${walletId}/deposit-address`);
    const b = await writesNothing(() => post(`/v1/wallets/${walletId}/deposit-address`, { asset: 'USDC', chain: 'base' }));
    expect(a.status).toBe(200);
    expect(b.body).toEqual(a.body);
    expect((await get(`/v1/wallets/${walletId}/deposit-addresses`)).body).toEqual({ addresses: [a.body.address] });
    await expectLedger(t.workspace, walletId, []);
  });

  it("answer 404 WALLET_NOT_FOUND for another tenant's wallet and write nothing", async () => {
    const other = await t.newWorkspace();
    const theirs = await t.newAgentWallet(other.client);
    for (const [route, body] of [['topup', { amountMinor: '100' }], ['deposit-address', undefined], ['faucet', undefined]] as const) {
      const res = await writesNothing(() => post(`/v1/wallets/${theirs.walletId}/${route}`, body));
      expect(res.status, route).toBe(404);
      expect(res.body.error?.code).toBe('WALLET_NOT_FOUND');
    }
    await expectLedger(other.client, theirs.walletId, []);
  });

  it('check the top-up body first: an amount as a JSON number is 400 VALIDATION_FAILED', async () => {
    const { walletId } = await t.newAgentWallet(t.workspace);
    const res = await writesNothing(() => post(`/v1/wallets/${walletId}/topup`, { amountMinor: 100 }));
    expect(res.status).toBe(400);
    expect(res.body.error?.message).toMatch(/^amountMinor: /);
  });
});

describe('every ledger this file wrote', () => {
  it('is consistent: gap-free seq and running sums', async () => {
    for (const w of await t.workspace.wallets.list()) expectConsistent(await t.workspace.wallets.ledger(w.id));
  });
});
