/**
 * On a production-mode gateway the sandbox credit does not exist: funding answers
 * 501 NOT_SUPPORTED and nothing is written, while the rest of the wallet routes work. No rail
 * adapter runs either, so top-ups, deposit addresses and the faucet answer 501 too.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startTestGateway } from '../helpers/gateway.js';
import { call, changedTables, snapshotDb } from '../helpers/matrix.js';
import { expectLedger } from './ledger-checks.js';

const t = await startTestGateway({ config: { mode: 'production' } });
afterAll(() => t.close());

describe('POST /v1/wallets/:id/fund on a production gateway', () => {
  it('answers 501 NOT_SUPPORTED, points to top-ups and deposits, and writes nothing', async () => {
    const { walletId } = await t.newAgentWallet(t.workspace);
    for (const body of [{ amountMinor: '100' }, { amountMinor: '100', rail: 'ach' }]) {
      const before = snapshotDb(t.dataDir);
      const res = await call(t, 'POST', `/v1/wallets/${walletId}/fund`, { apiKey: t.creds.workspace.apiKey, body });
      expect(res.status).toBe(501);
      expect(res.body.error?.code).toBe('NOT_SUPPORTED');
      expect(res.body.error?.message).toMatch(/sandbox.*top-up/);
      expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
    }
    await expectLedger(t.workspace, walletId, []);
  });

  it('still validates the body first: a JSON number amount is 400 VALIDATION_FAILED', async () => {
    const { walletId } = await t.newAgentWallet(t.workspace);
    const res = await call(t, 'POST', `/v1/wallets/${walletId}/fund`, { apiKey: t.creds.workspace.apiKey, body: { amountMinor: 100 } });
    expect(res.status).toBe(400);
    expect(res.body.error?.code).toBe('VALIDATION_FAILED');
    await expectLedger(t.workspace, walletId, []);
  });

  it('leaves the other wallet routes working', async () => {
    const { walletId } = await t.newAgentWallet(t.workspace);
    expect((await t.workspace.wallets.freeze(walletId)).frozen).toBe(true);
    expect(await t.workspace.wallets.balance(walletId)).toEqual({ balanceMinor: '0', availableMinor: '0', currency: 'USD' });
  });
});

describe('the rail routes on a production gateway without rail adapters', () => {
  const routes: [string, unknown][] = [
    ['topup', { amountMinor: '100' }],
    ['deposit-address', undefined],
    ['deposit-address', { asset: 'USDC', chain: 'base' }],
    ['faucet', undefined],
    ['faucet', { address: '0x0000000000000000000000000000000000000001' }],
  ];
  for (const [route, body] of routes) {
    it(`POST /v1/wallets/:id/${route} ${body ? 'with a body' : 'without a body'} answers 501 NOT_SUPPORTED and writes nothing`, async () => {
      const { walletId } = await t.newAgentWallet(t.workspace);
      const before = snapshotDb(t.dataDir);
      const res = await call(t, 'POST', `/v1/wallets/${walletId}/${route}`, { apiKey: t.creds.workspace.apiKey, ...(body ? { body } : {}) });
      expect(res.status).toBe(501);
      expect(res.body.error?.code).toBe('NOT_SUPPORTED');
      expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
      await expectLedger(t.workspace, walletId, []);
    });
  }

  it("answer 404 WALLET_NOT_FOUND for another tenant's wallet before 501", async () => {
    const other = await t.newWorkspace();
    const theirs = await t.newAgentWallet(other.client);
    for (const [route, body] of routes) {
      const res = await call(t, 'POST', `/v1/wallets/${theirs.walletId}/${route}`, { apiKey: t.creds.workspace.apiKey, ...(body ? { body } : {}) });
      expect(res.status, route).toBe(404);
      expect(res.body.error?.code).toBe('WALLET_NOT_FOUND');
    }
  });

  it('GET /v1/wallets/:id/deposit-addresses lists none', async () => {
    const { walletId } = await t.newAgentWallet(t.workspace);
    expect(await t.workspace.rail.depositAddresses(walletId)).toEqual([]);
  });
});
