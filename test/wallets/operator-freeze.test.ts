/**
 * Who froze a wallet decides who may unfreeze it: a freeze by the operator (support, fraud)
 * holds until an operator lifts it, and the owner's unfreeze is 403 FORBIDDEN saying so; the
 * owner's own freeze stays the owner's to lift, and an operator can lift either.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startTestGateway, sqliteOf } from '../helpers/gateway.js';
import { call, changedTables, snapshotDb } from '../helpers/matrix.js';
import { expectLedger } from './ledger-checks.js';

const t = await startTestGateway();
afterAll(() => t.close());

/** The stored flag and who set it (the store reads integers as bigint). */
const frozenBy = (walletId: string) => {
  const row = sqliteOf(t.gw).prepare('SELECT frozen, frozen_by AS frozenBy FROM wallets WHERE id = ?').get(walletId) as { frozen: bigint; frozenBy: string | null };
  return { frozen: Number(row.frozen), frozenBy: row.frozenBy };
};

/** The owner's unfreeze, which must be refused without writing anything. */
async function ownerUnfreezeRefused(walletId: string) {
  const before = snapshotDb(t.dataDir);
  const res = await call(t, 'POST', `/v1/wallets/${walletId}/unfreeze`, { apiKey: t.creds.workspace.apiKey });
  expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
  return res;
}

describe('a wallet frozen by the operator', () => {
  it("refuses the owner's unfreeze with 403 FORBIDDEN naming the operator, and stays frozen", async () => {
    const { walletId } = await t.newAgentWallet(t.workspace, 'operator-frozen');
    await t.workspace.wallets.fund(walletId, '70');
    expect(await t.operator.wallets.freeze(walletId)).toMatchObject({ id: walletId, frozen: true });
    expect(frozenBy(walletId)).toEqual({ frozen: 1, frozenBy: 'operator' });

    const res = await ownerUnfreezeRefused(walletId);
    expect(res.status).toBe(403);
    expect(res.body.error).toEqual({
      code: 'FORBIDDEN',
      message: `wallet ${walletId} was frozen by the platform operator and only an operator can unfreeze it; contact the platform operator`,
      details: { walletId, frozenBy: 'operator', keyKinds: ['operator'] },
    });
    expect((await t.workspace.wallets.get(walletId)).frozen).toBe(true);
    await expectLedger(t.workspace, walletId, ['70']);
  });

  it("stays the operator's when the owner freezes it again (nothing is written)", async () => {
    const { walletId } = await t.newAgentWallet(t.workspace, 'operator-frozen-2');
    const frozen = await t.operator.wallets.freeze(walletId);
    const before = snapshotDb(t.dataDir);
    expect(await t.workspace.wallets.freeze(walletId)).toEqual(frozen);
    expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
    expect((await ownerUnfreezeRefused(walletId)).status).toBe(403);
  });

  it('is unfrozen by an operator, after which the owner freezes and unfreezes it as before', async () => {
    const { walletId } = await t.newAgentWallet(t.workspace, 'operator-thawed');
    await t.operator.wallets.freeze(walletId);
    expect((await t.operator.wallets.unfreeze(walletId)).frozen).toBe(false);
    expect(frozenBy(walletId)).toEqual({ frozen: 0, frozenBy: null });
    expect((await t.workspace.wallets.freeze(walletId)).frozen).toBe(true);
    expect(frozenBy(walletId)).toEqual({ frozen: 1, frozenBy: 'owner' });
    expect((await t.workspace.wallets.unfreeze(walletId)).frozen).toBe(false);
  });
});

describe('a wallet frozen by its owner', () => {
  it('is unfrozen by its owner', async () => {
    const { walletId } = await t.newAgentWallet(t.workspace, 'owner-frozen');
    await t.workspace.wallets.freeze(walletId);
    expect(frozenBy(walletId)).toEqual({ frozen: 1, frozenBy: 'owner' });
    expect((await t.workspace.wallets.unfreeze(walletId)).frozen).toBe(false);
  });

  it('is unfrozen by an operator too', async () => {
    const { walletId } = await t.newAgentWallet(t.workspace, 'owner-frozen-op');
    await t.workspace.wallets.freeze(walletId);
    expect((await t.operator.wallets.unfreeze(walletId)).frozen).toBe(false);
  });

  it("becomes the operator's when the operator freezes it as well: the owner can no longer unfreeze it", async () => {
    const { walletId } = await t.newAgentWallet(t.workspace, 'owner-then-operator');
    const mine = await t.workspace.wallets.freeze(walletId);
    const taken = await t.operator.wallets.freeze(walletId);
    expect(taken.frozen).toBe(true);
    expect(taken.updatedAt >= mine.updatedAt).toBe(true);
    expect(frozenBy(walletId)).toEqual({ frozen: 1, frozenBy: 'operator' });
    expect((await ownerUnfreezeRefused(walletId)).status).toBe(403);
  });

  it('frozen before who froze it was recorded (frozen_by NULL) counts as frozen by its owner', async () => {
    const { walletId } = await t.newAgentWallet(t.workspace, 'legacy-frozen');
    sqliteOf(t.gw).prepare('UPDATE wallets SET frozen = (1 = 1), frozen_by = NULL WHERE id = ? -- (1 = 1): 1 on SQLite, true on PostgreSQL').run(walletId);
    expect((await t.workspace.wallets.unfreeze(walletId)).frozen).toBe(false);
  });
});
