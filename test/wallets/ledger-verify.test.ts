/**
 * The tamper-evident ledger (docs/ledger.md): each entry hashed into its wallet's chain, receipts
 * and checkpoints signing the heads, and `agentpay ledger verify` (src/cli/ledger-verify.ts over
 * src/domain/wallets/verify.ts) catching the three edits of issue 28 made behind the store with
 * the append-only triggers dropped: a changed memo, reference or time of an old entry; an amount
 * changed with every later balance moved to match; the newest entry deleted. On the gateway's real
 * database: a SQLite file, or PostgreSQL in the postgres project.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyObject } from '../../src/core/ed25519.js';
import { entryHash } from '../../src/store/ledger-chain.js';
import type { Principal } from '../../src/domain/tenancy/api-keys.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { PgStore } from '../../src/store/pg/pg-store.js';
import { verifyLedgerAt } from '../../src/cli/ledger-verify.js';
import type { LedgerProblem } from '../../src/domain/wallets/verify.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { createCapability, newBuyer, signProof } from '../payments/helpers.js';

describe('the tamper-evident ledger', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway();
  });
  afterAll(async () => {
    await t.close();
  });

  /** SQL on the gateway's database, behind the store. */
  const exec = async (sql: string) => {
    const store = t.gw.store;
    if (store instanceof SqliteStore) store.raw.exec(sql);
    else await (store as PgStore).pool.query(sql);
  };
  const verify = () => (t.gw.store instanceof SqliteStore ? verifyLedgerAt(t.dataDir) : verifyLedgerAt(t.dataDir, (t.gw.store as PgStore).url));
  const entries = (walletId: string) => t.gw.services.ctx.store.read((r) => r.ledger.list(walletId));

  async function paidCalls(n: number) {
    const s = await t.newProvider();
    const capabilityId = await createCapability(t, s.id, { priceMinor: '100' });
    const buyer = await newBuyer(t, t.workspace, '1000');
    const principal: Principal = { keyId: 'key_test', tenantId: s.id, tenantKind: 'provider', scopes: new Set(['payments:write']) };
    const receipts = [];
    for (let i = 0; i < n; i++) {
      const auth = await t.gw.services.payments.authorize(principal, { capabilityId, payment: signProof(await s.client.payments.challenge(capabilityId), buyer) });
      if (!('transactionId' in auth)) throw new Error('expected an authorization');
      receipts.push(await t.gw.services.payments.complete(principal, { transactionId: auth.transactionId, responseHash: `sha256:${String(i).repeat(64).slice(0, 64)}` }));
    }
    return { seller: s, buyer, receipts };
  }

  const names = (problems: LedgerProblem[], walletId: string) => problems.filter((p) => p.walletId === walletId);

  it('chains every entry, signs the chains\' heads in each receipt and in checkpoints, verifies untouched data, and names the wallet and entry of each of the three edits', async () => {
    const a = await paidCalls(2);
    const b = await paidCalls(2);
    const c = await paidCalls(2);

    // each entry hashes its fields and the previous entry's hash
    const chain = await entries(a.buyer.walletId);
    expect(chain.map((e) => e.type)).toEqual(['fund', 'hold', 'capture', 'hold', 'capture']);
    chain.forEach((e, i) => expect(e.hash).toBe(entryHash(e, i === 0 ? null : chain[i - 1]!.hash)));

    // a receipt signs the entries its resolution appended: the capture, the sale and the fee
    const key = await t.gw.services.signingKeys.publicKey(a.receipts[1]!.signingKeyId);
    const receipt = a.receipts[1]!;
    expect(verifyObject(key!.publicKeyPem, receipt)).toBe(true);
    expect(receipt.ledger?.map((l) => l.walletId)).toEqual([a.buyer.walletId, a.seller.walletId, expect.any(String)]);
    expect(receipt.ledger?.[0]).toEqual({ walletId: a.buyer.walletId, seq: 5, hash: chain[4]!.hash });
    expect(verifyObject(key!.publicKeyPem, { ...receipt, ledger: [{ ...receipt.ledger![0]!, hash: '0'.repeat(64) }, ...receipt.ledger!.slice(1)] })).toBe(false);

    // a checkpoint signs every chain's head, verifiable with the public key as receipts are
    const cp = await t.gw.services.ledgerCheckpoints.make();
    expect(cp.heads).toContainEqual({ walletId: c.buyer.walletId, seq: 5, hash: (await entries(c.buyer.walletId))[4]!.hash });
    const cpKey = await t.gw.services.signingKeys.publicKey(cp.signingKeyId);
    expect(verifyObject(cpKey!.publicKeyPem, cp)).toBe(true);
    expect(verifyObject(cpKey!.publicKeyPem, { ...cp, heads: cp.heads.slice(1) })).toBe(false);
    const listed = await t.gw.services.ledgerCheckpoints.list({});
    expect(listed.checkpoints[0]).toEqual(cp);
    // unchanged: the duty makes none
    expect(await t.gw.services.ledgerCheckpoints.makeIfMoved()).toBeUndefined();

    const clean = await verify();
    expect(clean.problems).toEqual([]);
    expect(clean.ok).toBe(true);
    expect(clean.checkpoints).toBeGreaterThanOrEqual(1);

    // the triggers dropped: anyone with the file or a superuser
    if (t.gw.store instanceof SqliteStore) await exec('DROP TRIGGER ledger_entries_no_update; DROP TRIGGER ledger_entries_no_delete;');
    else await exec('DROP TRIGGER ledger_entries_no_update ON ledger_entries; DROP TRIGGER ledger_entries_no_delete ON ledger_entries;');

    // 1. a changed memo, reference and time of an old entry (a's fund, entry 1)
    const aFund = chain[0]!;
    await exec(`UPDATE ledger_entries SET memo = 'a gift', reference = 'ref_x', created_at = created_at - 86400000 WHERE id = '${aFund.id}'`);
    let report = await verify();
    expect(report.ok).toBe(false);
    expect(names(report.problems, a.buyer.walletId)).toEqual([expect.objectContaining({ entryId: aFund.id, seq: 1, problem: expect.stringMatching(/hash does not match/) })]);

    // 2. an amount changed, with every later balance moved to match (b's fund: 1000 to 5000)
    const bChain = await entries(b.buyer.walletId);
    await exec(`UPDATE ledger_entries SET amount_minor = 5000 WHERE id = '${bChain[0]!.id}'`);
    await exec(`UPDATE ledger_entries SET balance_after = balance_after + 4000 WHERE wallet_id = '${b.buyer.walletId}'`);
    report = await verify();
    const bProblems = names(report.problems, b.buyer.walletId);
    // the running sums add up: only the chain shows it, from the changed entry on
    expect(bProblems.some((p) => /running sums/.test(p.problem))).toBe(false);
    expect(bProblems[0]).toMatchObject({ entryId: bChain[0]!.id, seq: 1, problem: expect.stringMatching(/hash does not match/) });
    expect(bProblems.filter((p) => /hash does not match/.test(p.problem)).map((p) => p.seq)).toEqual([1, 2, 3, 4, 5]);

    // 3. the newest entry deleted (c's last capture): its receipt and the checkpoint signed it
    const cChain = await entries(c.buyer.walletId);
    const newest = cChain.at(-1)!;
    await exec(`DELETE FROM ledger_entries WHERE id = '${newest.id}'`);
    report = await verify();
    const cProblems = names(report.problems, c.buyer.walletId);
    expect(cProblems).toContainEqual(expect.objectContaining({ seq: 5, checkpointId: cp.id, problem: expect.stringMatching(/missing: deleted/) }));
    expect(cProblems).toContainEqual(expect.objectContaining({ seq: 5, receiptId: c.receipts[1]!.id, problem: expect.stringMatching(/missing: deleted/) }));
    // and what it held is held again without a transaction that holds it
    expect(cProblems).toContainEqual(expect.objectContaining({ problem: expect.stringMatching(/holds 100 but its authorized transactions hold 0/) }));
  });
});
