/**
 * POST /v1/wallets/:id/fund on a production gateway looks at the wallet before the mode:
 * an unknown wallet or another tenant's answers 404 WALLET_NOT_FOUND, exactly as on every
 * other wallet route, and only the caller's own wallet gets 501 NOT_SUPPORTED. Nothing is
 * written either way.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startTestGateway } from '../helpers/gateway.js';
import { call, changedTables, snapshotDb } from '../helpers/matrix.js';
import { expectLedger } from './ledger-checks.js';

const t = await startTestGateway({ config: { mode: 'production' } });
afterAll(() => t.close());

describe('POST /v1/wallets/:id/fund on a production gateway', () => {
  it("answers 404 WALLET_NOT_FOUND for another tenant's wallet, as for an unknown one, and writes nothing", async () => {
    const other = await t.newWorkspace();
    const theirs = await t.newAgentWallet(other.client);
    for (const walletId of [theirs.walletId, 'wal_doesnotexist00000']) {
      const before = snapshotDb(t.dataDir);
      const res = await call(t, 'POST', `/v1/wallets/${walletId}/fund`, { apiKey: t.creds.workspace.apiKey, body: { amountMinor: '100' } });
      expect(res.status, JSON.stringify(res.body)).toBe(404);
      expect(res.body.error).toEqual({ code: 'WALLET_NOT_FOUND', message: `wallet ${walletId} not found`, details: { id: walletId } });
      expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
    }
    await expectLedger(other.client, theirs.walletId, []);
  });

  it("answers 501 NOT_SUPPORTED for the caller's own wallet", async () => {
    const { walletId } = await t.newAgentWallet(t.workspace);
    const res = await call(t, 'POST', `/v1/wallets/${walletId}/fund`, { apiKey: t.creds.workspace.apiKey, body: { amountMinor: '100' } });
    expect(res.status).toBe(501);
    expect(res.body.error?.code).toBe('NOT_SUPPORTED');
    await expectLedger(t.workspace, walletId, []);
  });

  it('answers 400 VALIDATION_FAILED for an amount out of range before looking at the wallet', async () => {
    const other = await t.newWorkspace();
    const theirs = await t.newAgentWallet(other.client);
    const res = await call(t, 'POST', `/v1/wallets/${theirs.walletId}/fund`, { apiKey: t.creds.workspace.apiKey, body: { amountMinor: '0' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'amountMinor' } });
  });
});
