/**
 * A fleet of three gateway processes on one PostgreSQL database (see fleet.test.ts), under
 * the failures a fleet must survive: one instance killed with SIGKILL in the middle of paid
 * calls, three times over, and an idempotent payout retried on other instances. Afterwards
 * nothing is lost or created (funded = balances + fees + paid out, over the whole database),
 * every receipt a buyer got verifies and is served by every instance, and what the killed
 * instances authorized but never completed is refunded by the sweeper of a surviving one.
 * Runs when AGENTPAY_TEST_DATABASE_URL is set.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyReceipt } from '../../src/cli/receipts-verify.js';
import { generateEd25519 } from '../../src/core/ed25519.js';
import type { DevCredentials } from '../../src/gateway/dev-credentials.js';
import { AgentpayClient, type Receipt } from '../../packages/sdk/src/client/index.js';
import { PgStore } from '../../src/store/pg/pg-store.js';
import { createTestDatabase, pgEnabled, type TestDatabase } from '../helpers/pg.js';
import { until } from '../helpers/wait.js';
import { newCapability as capabilityOf, newTenant, startInstance } from './helpers.js';
import { hashOf, signProof, type Buyer } from '../payments/helpers.js';
import { DEFAULT_PAYMENTS } from '../../src/domain/payments/config.js';

const TICK_MS = 150;
const ROUNDS = 3;

interface Instance {
  child: ChildProcess;
  baseUrl: string;
  pid: number;
  alive: boolean;
}

let db: TestDatabase;
let sql: pg.Client;
let dataDir: string;
let store: PgStore;
let ca: string;
let creds: DevCredentials;
const instances: Instance[] = [];
/** sweeper runs seen: pids, in order */
const sweeps: number[] = [];

async function start(withCreds: boolean): Promise<Instance & { creds?: DevCredentials; caCertPath: string }> {
  const i = await startInstance({ dataDir, database: db.url, tickMs: TICK_MS, withCreds, onDuty: (duty, pid) => { if (duty === 'sweeper') sweeps.push(pid); } });
  return { ...i, alive: true };
}

const live = () => instances.filter((i) => i.alive);
const at = (i: Instance, apiKey: string) => new AgentpayClient({ gatewayUrl: i.baseUrl, ca, apiKey });
/** the n-th live instance, round robin: consecutive steps of one call go to different instances */
const pick = (n: number) => { const l = live(); return l[n % l.length]!; };

async function kill(victim: Instance): Promise<void> {
  const exited = new Promise((res) => victim.child.once('exit', res));
  victim.alive = false;
  victim.child.kill('SIGKILL');
  await exited;
}

const newProvider = async (name: string) => {
  const p = await newTenant(store, 'provider', name);
  return { ...p, walletId: p.walletId! };
};
const newCapability = (providerId: string, price: bigint) => capabilityOf(store, providerId, price);

async function newBuyer(fundMinor: string): Promise<Buyer> {
  const pair = generateEd25519();
  const w = await at(pick(0), creds.workspace.apiKey).wallets.create({ ownerType: 'agent', ownerId: `agent-${Math.random().toString(36).slice(2, 8)}`, publicKeyPem: pair.publicKeyPem });
  await at(pick(1), creds.workspace.apiKey).wallets.fund(w.id, fundMinor);
  return { walletId: w.id, ...pair };
}

/**
 * Money is conserved over the whole database: everything funded equals the balances of
 * every wallet but the platform's, plus the fees, plus everything paid out; running sums
 * are gap-free and never negative; the held total is what authorized transactions hold.
 */
async function expectConserved(): Promise<{ funded: bigint; fees: bigint; paidOut: bigint }> {
  const { rows } = await sql.query<{ wallet_id: string; seq: string; type: string; amount_minor: string; hold_minor: string; balance_after: string; held_after: string }>(
    'SELECT wallet_id, seq, type, amount_minor, hold_minor, balance_after, held_after FROM ledger_entries ORDER BY wallet_id, seq');
  const byType = new Map<string, bigint>();
  const perWallet = new Map<string, { balance: bigint; held: bigint; seq: bigint }>();
  for (const e of rows) {
    const w = perWallet.get(e.wallet_id) ?? { balance: 0n, held: 0n, seq: 0n };
    w.balance += BigInt(e.amount_minor);
    w.held += BigInt(e.hold_minor);
    expect(BigInt(e.seq), `gap-free seq in ${e.wallet_id}`).toBe(w.seq + 1n);
    w.seq = BigInt(e.seq);
    expect([BigInt(e.balance_after), BigInt(e.held_after)], `running sums of ${e.wallet_id}`).toEqual([w.balance, w.held]);
    expect(w.balance - w.held >= 0n && w.held >= 0n, `available never negative in ${e.wallet_id}`).toBe(true);
    perWallet.set(e.wallet_id, w);
    byType.set(e.type, (byType.get(e.type) ?? 0n) + BigInt(e.amount_minor));
  }
  const get = (k: string) => byType.get(k) ?? 0n;
  const funded = get('fund') + get('topup') + get('deposit');
  const fees = perWallet.get('wal_platform_revenue')?.balance ?? 0n;
  const balances = [...perWallet].filter(([id]) => id !== 'wal_platform_revenue').reduce((s, [, w]) => s + w.balance, 0n);
  const paidOut = -(get('payout') + get('payout_return'));
  expect(funded, 'funded = balances + fees + paid out').toBe(balances + fees + paidOut);
  const held = [...perWallet.values()].reduce((s, w) => s + w.held, 0n);
  const open = await sql.query<{ s: string }>("SELECT coalesce(sum(amount_minor), 0)::text AS s FROM transactions WHERE status = 'authorized'");
  expect(held, 'held total = what authorized transactions hold').toBe(BigInt(open.rows[0]!.s));
  return { funded, fees, paidOut };
}

describe.skipIf(!pgEnabled())('a fleet of three gateways on one PostgreSQL database, one of them killed', () => {
  beforeAll(async () => {
    db = await createTestDatabase('agentpay_fleet_kill');
    dataDir = mkdtempSync(join(tmpdir(), 'agentpay-fleet-kill-'));
    const first = await start(true);
    creds = first.creds!;
    ca = readFileSync(first.caCertPath, 'utf8');
    instances.push(first, ...(await Promise.all([start(false), start(false)])));
    store = await PgStore.open({ url: db.url });
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
  }, 240_000); // three processes start under whatever load the machine has

  afterAll(async () => {
    await sql?.end();
    await store?.close();
    await Promise.all(instances.filter((i) => i.alive).map((i) => new Promise<void>((res) => {
      if (i.child.exitCode !== null || i.child.signalCode !== null) return res();
      i.child.once('exit', () => res());
      i.child.send('stop');
    })));
    await db?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it(`kill -9 of one instance under load, ${ROUNDS} times: nothing lost or created, every receipt verifies everywhere, the dead one's holds refunded by the sweeper elsewhere`, async () => {
    const seller = await newProvider('Fleet Seller');
    const capabilityId = await newCapability(seller.id, 7n);
    const buyers = await Promise.all(Array.from({ length: 6 }, () => newBuyer('100000')));
    const receipts: Receipt[] = [];
    /** where each receipt was completed, to read it from the others */
    const completedOn = new Map<string, string>();
    /** authorized, then the complete's answer was lost (to the kill): completed or not, the database knows */
    const lost: string[] = [];
    /** authorized on the victim, whose seller handler was still running when it died (one per round completes through a survivor) */
    const abandoned: string[] = [];
    const body = '{"ok":true}';

    /** a buyer's paid calls, each step on another live instance, until `stop` */
    const worker = async (buyer: Buyer, w: number, state: { stop: boolean; done: number }) => {
      for (let n = w; !state.stop; n += 3) {
        let txnId: string | undefined;
        try {
          const challenge = await at(pick(n), seller.apiKey).payments.challenge(capabilityId);
          const auth = await at(pick(n + 1), seller.apiKey).payments.authorize({ capabilityId, payment: signProof(challenge, buyer) });
          txnId = auth.transactionId;
          const completer = pick(n + 2);
          const { receipt } = await at(completer, seller.apiKey).payments.complete({ transactionId: txnId, responseHash: hashOf(body) });
          receipts.push(receipt);
          completedOn.set(receipt.id, completer.baseUrl);
          state.done++;
        } catch (e) {
          // an instance died under this call: what it did or not is settled below, from the database
          if (txnId) lost.push(txnId);
          if ((e as { status?: number }).status !== undefined && (e as { status: number }).status < 500) throw e;
        }
      }
    };

    for (let round = 0; round < ROUNDS; round++) {
      const victim = instances.find((i) => i.alive && i === instances[round % instances.length])!;
      const seller0 = at(victim, seller.apiKey);
      // three calls authorized on the victim whose seller handler is still running when it dies
      for (const buyer of buyers.slice(0, 3)) {
        const challenge = await seller0.payments.challenge(capabilityId);
        abandoned.push((await seller0.payments.authorize({ capabilityId, payment: signProof(challenge, buyer) })).transactionId);
      }
      const state = { stop: false, done: 0 };
      const load = Promise.all(buyers.map((b, w) => worker(b, w, state)));
      await until(() => state.done >= 15, 'paid calls before the kill');
      await kill(victim);
      const mark = state.done;
      // the seller's handler of one of them finishes after the kill: it completes through a survivor
      const handedOver = abandoned.pop()!;
      const survivor = pick(round);
      const { receipt } = await at(survivor, seller.apiKey).payments.complete({ transactionId: handedOver, responseHash: hashOf(body) });
      receipts.push(receipt);
      completedOn.set(receipt.id, survivor.baseUrl);
      await until(() => state.done >= mark + 15, 'paid calls on the survivors after the kill');
      state.stop = true;
      await load;
      // the killed process comes back (as a new one) and takes its share again
      const back = await start(false);
      instances[instances.indexOf(victim)] = back;
    }
    expect(instances.filter((i) => i.alive)).toHaveLength(3);

    // nothing created: every completed transaction is one a buyer got a receipt for, or one whose answer was lost
    const completed = (await sql.query<{ id: string }>("SELECT id FROM transactions WHERE capability_id = $1 AND status = 'succeeded'", [capabilityId])).rows.map((r) => r.id);
    const receiptTxns = new Set(receipts.map((r) => r.transactionId));
    expect(receiptTxns.size).toBe(receipts.length);
    for (const id of completed) expect(receiptTxns.has(id) || lost.includes(id), `completed ${id} is known to a buyer`).toBe(true);
    for (const id of receiptTxns) expect(completed, `receipt of ${id} is a completed transaction`).toContain(id);
    for (const id of abandoned) expect(completed).not.toContain(id);
    expect(receipts.length).toBeGreaterThanOrEqual(ROUNDS * 30);
    await expectConserved();

    // the abandoned holds are still held; move the clock of every live instance past the in-flight time:
    // the sweeper runs on one of them (a duty), never on a killed one, and refunds them
    const before = sweeps.length;
    const openCount = async () => Number((await sql.query<{ n: string }>("SELECT count(*)::text AS n FROM transactions WHERE status = 'authorized'")).rows[0]!.n);
    expect(abandoned).toHaveLength(ROUNDS * 2);
    const held = await sql.query<{ status: string }>('SELECT status FROM transactions WHERE id = ANY($1)', [abandoned]);
    expect(held.rows.map((r) => r.status)).toEqual(abandoned.map(() => 'authorized'));
    for (const i of live()) i.child.send({ type: 'clock', offsetMs: DEFAULT_PAYMENTS.releaseUnsettledAfterMs + 60_000 });
    await until(async () => (await openCount()) === 0, 'the sweeper to refund what the killed instances held');
    const swept = new Set(sweeps.slice(before));
    expect(swept.size).toBeGreaterThan(0);
    expect([...swept].every((pid) => live().some((i) => i.pid === pid))).toBe(true);
    const statusOf = await sql.query<{ id: string; status: string }>('SELECT id, status FROM transactions WHERE id = ANY($1)', [abandoned]);
    expect(statusOf.rows.map((r) => r.status)).toEqual(abandoned.map(() => 'expired'));
    for (const id of abandoned) {
      const sums = await sql.query<{ a: string; h: string }>('SELECT sum(amount_minor)::text AS a, sum(hold_minor)::text AS h FROM ledger_entries WHERE transaction_id = $1', [id]);
      expect([sums.rows[0]!.a, sums.rows[0]!.h], `the hold of ${id} released, nothing charged`).toEqual(['0', '0']);
    }
    // a call whose complete got no answer either completed before the kill or was refunded by the sweeper
    const lostStatus = await sql.query<{ status: string }>('SELECT status FROM transactions WHERE id = ANY($1)', [lost]);
    expect(lostStatus.rows).toHaveLength(lost.length);
    for (const r of lostStatus.rows) expect(['succeeded', 'expired']).toContain(r.status);
    const { funded } = await expectConserved();
    // every buyer paid exactly its receipts plus what it lost to a complete whose answer never came
    const balances = await sql.query<{ wallet_id: string; b: string; h: string }>(
      'SELECT wallet_id, sum(amount_minor)::text AS b, sum(hold_minor)::text AS h FROM ledger_entries WHERE wallet_id = ANY($1) GROUP BY wallet_id', [buyers.map((b) => b.walletId)]);
    for (const b of buyers) {
      const row = balances.rows.find((r) => r.wallet_id === b.walletId)!;
      const charged = (await sql.query<{ n: string }>("SELECT count(*)::text AS n FROM transactions WHERE wallet_id = $1 AND status = 'succeeded'", [b.walletId])).rows[0]!.n;
      expect(BigInt(charged)).toBeGreaterThanOrEqual(BigInt(receipts.filter((r) => r.consumerId === b.walletId).length));
      expect([BigInt(row.b), BigInt(row.h)], `${b.walletId} paid for its calls that succeeded, and nothing else`).toEqual([100000n - 7n * BigInt(charged), 0n]);
    }
    expect(funded).toBeGreaterThan(0n);

    // every receipt verifies (as `agentpay receipts verify` checks it) and every other instance serves it
    const ws = (i: Instance) => at(i, creds.workspace.apiKey);
    const keys = new Map<string, string>();
    for (const [k, receipt] of receipts.entries()) {
      const others = live().filter((i) => i.baseUrl !== completedOn.get(receipt.id));
      const from = others[k % others.length]!;
      const verdict = await verifyReceipt({
        value: receipt, source: receipt.id,
        key: async (keyId) => {
          if (!keys.has(keyId)) keys.set(keyId, (await ws(from).platform.receiptKey(keyId)).publicKeyPem);
          return { publicKeyPem: keys.get(keyId)!, from: 'gateway', baseUrl: from.baseUrl };
        },
        response: { bytes: Buffer.from(body, 'utf8'), name: 'response' },
      });
      expect(verdict.valid, `${receipt.id}: ${JSON.stringify(verdict.problems)}`).toBe(true);
      expect(await at(from, seller.apiKey).receipts.get(receipt.id)).toEqual(receipt);
    }
    // the work is fixed (3 kills, 30 paid calls each), its time is not: 117 s once in CI on a loaded 2-core machine
  }, 300_000);

  it('an idempotent payout made on one instance and retried on the two others at once is one payout, one debit, one answer', async () => {
    const p = await newProvider('Fleet Payee');
    const [a, b, c] = live() as [Instance, Instance, Instance];
    await at(a, p.apiKey).wallets.fund(p.walletId, '10000');
    // a first destination for an asset freezes nothing (only a change does: docs/api/rails.md)
    await at(b, p.apiKey).payouts.setDestination(p.id, { destination: 'ext_bank_0001' });
    const input = { walletId: p.walletId, amountMinor: '2500', rail: 'bank_transfer' } as const;
    const key = `fleet-payout-${Math.random().toString(36).slice(2, 10)}`;
    const first = await at(a, p.apiKey).payouts.create(input, { idempotencyKey: key });
    expect(first).toMatchObject({ status: 'submitted', amountMinor: '2500' });
    const retries = await Promise.all(Array.from({ length: 10 }, (_, n) => at(n % 2 ? b : c, p.apiKey).payouts.create(input, { idempotencyKey: key })));
    for (const r of retries) expect(r).toEqual(first);
    const payouts = await sql.query<{ id: string }>("SELECT id FROM rail_transactions WHERE kind = 'payout' AND wallet_id = $1", [p.walletId]);
    expect(payouts.rows.map((r) => r.id)).toEqual([first.id]);
    const entries = await sql.query<{ type: string; amount_minor: string }>('SELECT type, amount_minor::text FROM ledger_entries WHERE wallet_id = $1 ORDER BY seq', [p.walletId]);
    expect(entries.rows.map((e) => [e.type, e.amount_minor])).toEqual([['fund', '10000'], ['payout', '-2500']]);
    expect((await at(c, p.apiKey).payouts.list()).payouts.map((x) => x.id)).toEqual([first.id]);
    const { paidOut } = await expectConserved();
    expect(paidOut).toBe(2500n);
  }, 60_000);
});
