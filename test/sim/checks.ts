/**
 * What the simulation checks of the store after every step, against its model (./sim.ts):
 * - every wallet's balance and held amount are the model's, none negative, nor its available;
 * - conservation: the balances of all wallets (buyers, sellers, the platform's fees) add up to
 *   the money that came in from outside less the money paid out and not returned;
 * - each transaction is in the model's state, with one hold, resolved at most once by the
 *   entries its state calls for (capture, sale and fee; or one refund), and one receipt of the
 *   matching kind exactly when it is resolved;
 * - an idempotency key has at most one succeeded transaction within its 24 hours;
 * - each breaker (buyer wallet, seller) is the model's: failures in a row and paused;
 * - each payment session is in the model's state, its hold, claims and release as it says;
 * - in full (every `fullCheckEvery` steps and after the last): every ledger's sequence and
 *   running sums, every transaction, and each payout's ledger entries (one debit; one return
 *   exactly when the rail failed or returned it).
 */
import { feeFor } from '../../src/core/money.js';
import type { Repos } from '../../src/store/store.js';
import type { LedgerEntry } from '../../src/store/repos/wallets.js';
import { DEFAULT_CONFIG } from '../../src/gateway/config.js';
import { PLATFORM_REVENUE_WALLET_ID } from '../../src/domain/tenancy/tenants.js';
import { IDEMPOTENCY_WINDOW_MS } from '../../src/domain/payments/config.js';
import { fail, type MSession, type MTxn, type Simulation } from './sim.js';
import { SELLERS, WALLETS } from './steps.js';

export async function checkStore(sim: Simulation, full: boolean): Promise<void> {
  const problems = await sim.store.inner.read(async (r) => {
    const out: string[] = [];
    await checkBalances(sim, r, out);
    await checkBreakers(sim, r, out);
    const txns = full ? sim.model.txns : sim.model.txns.filter((t) => sim.model.touched.has(t.id));
    await Promise.all(txns.map((t) => checkTransaction(sim, r, t, out)));
    const sessions = full ? sim.model.sessions : sim.model.sessions.filter((m) => sim.model.touched.has(m.id));
    await Promise.all(sessions.map((m) => checkSession(sim, r, m, out)));
    checkKeys(sim, out);
    if (full) {
      const ledgers = await Promise.all(sim.walletIds().map((id) => r.ledger.list(id)));
      sim.walletIds().forEach((id, i) => checkLedger(id, ledgers[i]!, out));
      await checkPayouts(sim, r, out);
    }
    return out;
  });
  if (problems.length) fail(problems.join('; '));
}

async function checkBalances(sim: Simulation, r: Repos, out: string[]): Promise<void> {
  let total = 0n;
  const ids = sim.walletIds();
  // asked at once: one round trip on PostgreSQL
  const lasts = await Promise.all(ids.map((id) => r.ledger.last(id)));
  for (const [i, id] of ids.entries()) {
    const last = lasts[i];
    const balance = last?.balanceAfter ?? 0n;
    const held = last?.heldAfter ?? 0n;
    total += balance;
    const m = sim.model.balances.get(id)!;
    if (balance !== m.balance || held !== m.held) out.push(`wallet ${id} has balance ${balance} held ${held}, the model ${m.balance} held ${m.held}`);
    if (balance < 0n || held < 0n || balance - held < 0n) out.push(`wallet ${id} is negative: balance ${balance}, held ${held}, available ${balance - held}`);
  }
  const expected = sim.model.externalIn - sim.model.externalOut;
  if (total !== expected) out.push(`money is not conserved: the wallets hold ${total}, while ${sim.model.externalIn} came in and ${sim.model.externalOut} went out (${expected})`);
}

async function checkBreakers(sim: Simulation, r: Repos, out: string[]): Promise<void> {
  const pairs = Array.from({ length: WALLETS * SELLERS }, (_, i) => [Math.floor(i / SELLERS), i % SELLERS] as const);
  const rows = await Promise.all(pairs.map(([w, s]) => r.breakers.get(sim.actorWallet(w), sim.sellerOf(s).id)));
  for (const [i, [w, s]] of pairs.entries()) {
    const b = rows[i];
    const m = sim.model.breakers.get(sim.breakerKey(w, s)) ?? { count: 0, paused: false };
    const got = { count: b?.consecutiveFailures ?? 0, paused: b?.paused ?? false };
    if (got.count !== m.count || got.paused !== m.paused) {
      out.push(`breaker ${sim.breakerKey(w, s)} has ${got.count} failures in a row (paused ${got.paused}), the model ${m.count} (paused ${m.paused})`);
    }
  }
}

const count = (es: LedgerEntry[], type: string) => es.filter((e) => e.type === type);

async function checkTransaction(sim: Simulation, r: Repos, t: MTxn, out: string[]): Promise<void> {
  const [row, entries, receipts] = await Promise.all([r.transactions.get(t.id), r.ledger.byTransaction(t.id), r.receipts.byTransaction(t.id)]);
  if (!row) return void out.push(`transaction ${t.id} is missing`);
  if (row.status !== t.status) out.push(`transaction ${t.id} is ${row.status}, the model ${t.status}`);
  const buyer = sim.actorWallet(t.w);
  const holds = count(entries, 'hold');
  if (holds.length !== 1 || holds[0]!.walletId !== buyer || holds[0]!.holdMinor !== t.amount || holds[0]!.amountMinor !== 0n) {
    out.push(`transaction ${t.id} has ${holds.length} hold entries (want one of ${t.amount} on ${buyer})`);
  }
  const captures = count(entries, 'capture');
  const refunds = count(entries, 'refund');
  const sales = count(entries, 'sale');
  const fees = count(entries, 'fee');
  const releases = count(entries, 'release');
  // a metered call is charged units × unit price, and the rest of its hold is released
  const charged = sim.chargedOf(t);
  const fee = feeFor(charged, DEFAULT_CONFIG.feeBps);
  const resolutions = `${captures.length} captures, ${releases.length} releases, ${refunds.length} refunds, ${sales.length} sales, ${fees.length} fees`;
  if (row.status === 'authorized') {
    if (entries.length !== 1) out.push(`authorized transaction ${t.id} has ${resolutions}: resolved without its status saying so`);
    if (receipts.length) out.push(`authorized transaction ${t.id} has ${receipts.length} receipts`);
  } else if (row.status === 'succeeded') {
    const okCapture = captures.length === 1 && captures[0]!.walletId === buyer && captures[0]!.amountMinor === -charged && captures[0]!.holdMinor === -charged;
    const okRelease = charged === t.amount ? releases.length === 0
      : releases.length === 1 && releases[0]!.walletId === buyer && releases[0]!.amountMinor === 0n && releases[0]!.holdMinor === -(t.amount - charged);
    const saleSum = sales.reduce((s, e) => s + e.amountMinor, 0n);
    const feeSum = fees.reduce((s, e) => s + e.amountMinor, 0n);
    if (!okCapture || !okRelease || refunds.length || sales.length > 1 || fees.length > 1 || saleSum !== charged - fee || feeSum !== fee
      || sales.some((e) => e.walletId !== sim.sellerOf(t.s).walletId) || fees.some((e) => e.walletId !== PLATFORM_REVENUE_WALLET_ID)) {
      out.push(`succeeded transaction ${t.id} of ${t.amount} (charged ${charged}) has ${resolutions} (sales ${saleSum}, fees ${feeSum}; want one capture of ${charged}, the rest released, sale ${charged - fee}, fee ${fee})`);
    }
    if (receipts[0] && receipts[0].amountMinor !== charged) out.push(`succeeded transaction ${t.id}'s receipt says ${receipts[0].amountMinor}, it was charged ${charged}`);
    if (receipts.length !== 1 || receipts[0]!.status !== 'success') out.push(`succeeded transaction ${t.id} has receipts [${receipts.map((x) => x.status)}], want one success`);
  } else {
    if (refunds.length !== 1 || refunds[0]!.holdMinor !== -t.amount || refunds[0]!.amountMinor !== 0n || refunds[0]!.walletId !== buyer || captures.length || releases.length || sales.length || fees.length) {
      out.push(`${row.status} transaction ${t.id} has ${resolutions}; want one refund of the hold ${t.amount}`);
    }
    if (receipts.length !== 1 || receipts[0]!.status !== 'failed') out.push(`${row.status} transaction ${t.id} has receipts [${receipts.map((x) => x.status)}], want one failed`);
  }
}

/**
 * A payment session is in the model's state, with one hold of its cap on the buyer, captures that add
 * up to what was claimed, sales and fees that add up to it less and of feeFor(claimed), and one
 * release of the rest exactly when it ended with some left.
 */
async function checkSession(sim: Simulation, r: Repos, m: MSession, out: string[]): Promise<void> {
  const [row, entries] = await Promise.all([r.sessions.get(m.id), r.ledger.byTransaction(m.id)]);
  if (!row) return void out.push(`session ${m.id} is missing`);
  if (row.status !== m.status || row.claimedMinor !== m.claimed || row.feeMinor !== m.fee) {
    out.push(`session ${m.id} is ${row.status}, claimed ${row.claimedMinor}, fee ${row.feeMinor}; the model ${m.status}, ${m.claimed}, ${m.fee}`);
  }
  const buyer = sim.actorWallet(m.w);
  const sum = (es: LedgerEntry[]) => es.reduce((n, e) => n + e.amountMinor, 0n);
  const holds = count(entries, 'hold');
  const captures = count(entries, 'capture');
  const releases = count(entries, 'release');
  const fee = feeFor(m.claimed, DEFAULT_CONFIG.feeBps);
  if (holds.length !== 1 || holds[0]!.walletId !== buyer || holds[0]!.holdMinor !== m.cap) out.push(`session ${m.id} has ${holds.length} holds (want one of ${m.cap} on ${buyer})`);
  if (sum(captures) !== -m.claimed || captures.some((e) => e.walletId !== buyer || e.holdMinor !== e.amountMinor)) out.push(`session ${m.id}'s captures add up to ${sum(captures)}, want ${-m.claimed}`);
  if (sum(count(entries, 'sale')) !== m.claimed - fee || sum(count(entries, 'fee')) !== fee) {
    out.push(`session ${m.id}'s sales add up to ${sum(count(entries, 'sale'))} and fees to ${sum(count(entries, 'fee'))}, want ${m.claimed - fee} and ${fee}`);
  }
  const rest = m.cap - m.claimed;
  const wantRelease = m.status !== 'open' && rest > 0n;
  if (releases.length !== (wantRelease ? 1 : 0) || (wantRelease && releases[0]!.holdMinor !== -rest)) out.push(`session ${m.id} (${m.status}) has ${releases.length} releases, want ${wantRelease ? `one of ${rest}` : 'none'}`);
}

/** A key is remembered 24 hours: two succeeded purchases under one key are at least that far apart. */
function checkKeys(sim: Simulation, out: string[]): void {
  for (const k of sim.model.keys) {
    const succeeded = sim.model.txns.filter((t) => t.key === k && t.status === 'succeeded').sort((a, b) => a.authorizedAt - b.authorizedAt);
    for (let i = 1; i < succeeded.length; i++) {
      const [a, b] = [succeeded[i - 1]!, succeeded[i]!];
      if (b.authorizedAt - a.authorizedAt < IDEMPOTENCY_WINDOW_MS) out.push(`idempotency key ${k.name} has two succeeded transactions within its window: ${a.id} and ${b.id}`);
    }
  }
}

/** seq 1..n without gaps, each running sum the previous one plus the entry. */
function checkLedger(walletId: string, entries: LedgerEntry[], out: string[]): void {
  let balance = 0n;
  let held = 0n;
  entries.forEach((e, i) => {
    balance += e.amountMinor;
    held += e.holdMinor;
    if (e.seq !== i + 1) out.push(`wallet ${walletId}: entry ${e.id} has seq ${e.seq}, want ${i + 1}`);
    if (e.balanceAfter !== balance || e.heldAfter !== held) out.push(`wallet ${walletId}: entry ${e.seq} says balance ${e.balanceAfter} held ${e.heldAfter}, the sums are ${balance} and ${held}`);
    if (e.balanceAfter < 0n || e.heldAfter < 0n || e.balanceAfter < e.heldAfter) out.push(`wallet ${walletId}: entry ${e.seq} leaves balance ${e.balanceAfter} held ${e.heldAfter}`);
  });
}

async function checkPayouts(sim: Simulation, r: Repos, out: string[]): Promise<void> {
  for (let s = 0; s < SELLERS; s++) {
    const entries = await r.ledger.list(sim.sellerOf(s).walletId);
    for (const m of sim.model.payouts.filter((p) => p.s === s)) {
      const mine = entries.filter((e) => e.reference === `payout:${m.id}`);
      const debits = mine.filter((e) => e.type === 'payout');
      const returns = mine.filter((e) => e.type === 'payout_return');
      const back = m.state === 'failed' || m.state === 'returned';
      if (debits.length !== 1 || debits[0]!.amountMinor !== -m.amount) out.push(`payout ${m.id} of ${m.amount} has ${debits.length} debits`);
      if (returns.length !== (back ? 1 : 0) || returns.some((e) => e.amountMinor !== m.amount)) out.push(`payout ${m.id} (${m.state}) has ${returns.length} returns`);
    }
  }
}
