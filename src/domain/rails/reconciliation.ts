/**
 * Reconciliation: the ledger against the rail adapters' records.
 *
 * Coverage: what the platform owes (every wallet's balance, fees included) against what
 * the rails hold for it (each adapter's treasury; USDC at par). When obligations exceed
 * holdings by more than the conversion tolerance (the price band applied to the USDC
 * that crossed the rails: deposits and USDC payouts are converted at in-band prices, not
 * at par), payouts are paused with 503 COVERAGE_SHORTFALL until a later run finds
 * coverage again. On a sandbox gateway the sandbox credits (`fund` entries) count as
 * held: they are simulated money with no rail behind them by design.
 *
 * Records: each top-up, deposit and payout against the adapter's record of it
 * (existence, amount, outcome; a `failed` payout, re-credited, must not be held by its
 * rail), and the ledger's sums per entry type against the rail transactions. Mismatches are listed in the report; they do not pause payouts by
 * themselves (a missing credit is the customer's loss, not the platform's coverage).
 *
 * Only a change of verdict is stored (with an event for the operator), so a periodic run
 * with nothing new writes nothing.
 */
import type { Discrepancy, ReconciliationReport } from 'agentpay-sdk/contract';
import { iso } from '../../core/clock.js';
import type { RailTransaction } from '../../store/repos/rails.js';
import type { DomainContext } from '../platform/context.js';
import { OPERATOR_TENANT_ID } from '../tenancy/tenants.js';
import { recordEvent } from '../platform/events.js';
import { usdcParMinor } from './pricing.js';
import type { RailRegistry } from './registry.js';
import { creditedMinor } from './views.js';

/** The report as answered (agentpay-sdk/contract, rails.ts). */
export type { Discrepancy, ReconciliationReport } from 'agentpay-sdk/contract';

const MAX_LISTED = 100;

export class Reconciler {
  private last: ReconciliationReport | undefined;

  constructor(private ctx: DomainContext, private registry: RailRegistry, private opts: { sandbox: boolean; priceBandBps: number }) {}

  /** The latest report of this process, or the latest stored verdict (the report of its run, as stored by run()). */
  async latest(): Promise<ReconciliationReport | null> {
    if (this.last) return this.last;
    return ((await this.ctx.store.read((r) => r.reconciliations.latest()))?.report as ReconciliationReport | undefined) ?? null;
  }

  async run(): Promise<ReconciliationReport> {
    const { totals, all } = await this.ctx.store.read(async (r) => ({
      totals: await r.reconciliations.ledgerTotals(),
      all: [...(await r.railTransactions.listByKind('topup')), ...(await r.railTransactions.listByKind('deposit')), ...(await r.railTransactions.listByKind('payout'))],
    }));

    const holdings: ReconciliationReport['holdings'] = [];
    for (const a of this.registry.providers) {
      if (!a.treasury) continue;
      const b = await a.treasury.balance();
      const value = b.asset === 'USDC' ? usdcParMinor(b.amountMinor) : b.amountMinor;
      holdings.push({ treasuryProviderId: a.info.id, asset: b.asset, amountMinor: b.amountMinor.toString(), valueMinor: value.toString() });
    }
    const sandboxCredits = this.opts.sandbox ? (totals.byType.fund ?? 0n) : 0n;
    const held = holdings.reduce((s, h) => s + BigInt(h.valueMinor), 0n) + sandboxCredits;
    const usdcFlow = all.filter((t) => t.railCurrency === 'USDC' && (t.state === 'confirmed' || t.state === 'submitted' || t.state === 'returned'))
      .reduce((s, t) => s + usdcParMinor(t.railAmountMinor), 0n);
    const tolerance = (usdcFlow * BigInt(this.opts.priceBandBps)) / 10_000n;
    const obligations = totals.balancesMinor;
    const shortfall = obligations > held ? obligations - held : 0n;
    const status = shortfall > tolerance ? 'shortfall' : 'ok';

    const discrepancies = [...this.ledgerChecks(totals.byType, all), ...(await this.recordChecks(all))];
    const now = this.ctx.clock.now();
    const report: ReconciliationReport = {
      status, at: iso(now), obligationsMinor: obligations.toString(), holdingsMinor: held.toString(), shortfallMinor: shortfall.toString(),
      toleranceMinor: tolerance.toString(), holdings, sandboxCreditsMinor: sandboxCredits.toString(),
      discrepancies: discrepancies.slice(0, MAX_LISTED), paused: status === 'shortfall',
    };

    await this.ctx.store.tx(async (r) => {
      const prev = (await r.reconciliations.latest())?.status ?? 'ok';
      if (prev === status) return;
      await r.reconciliations.insert({
        id: this.ctx.ids.next('reconciliation'), status, obligationsMinor: obligations, holdingsMinor: held,
        report: report as unknown as Record<string, unknown>, createdAt: now,
      });
      await recordEvent(r, this.ctx, OPERATOR_TENANT_ID, status === 'shortfall' ? 'reconciliation.shortfall' : 'reconciliation.recovered', {
        obligationsMinor: report.obligationsMinor, holdingsMinor: report.holdingsMinor, shortfallMinor: report.shortfallMinor,
      });
    });
    this.last = report;
    return report;
  }

  /** The ledger's sums per type against what the rail transactions say moved. */
  private ledgerChecks(byType: Record<string, bigint>, all: RailTransaction[]): Discrepancy[] {
    const moved = (kind: RailTransaction['kind']) => all.filter((t) => t.kind === kind).reduce((s, t) => s + creditedMinor(t), 0n);
    const checks: [string, bigint, bigint][] = [
      ['topup', byType.topup ?? 0n, moved('topup')],
      ['deposit', byType.deposit ?? 0n, moved('deposit')],
      ['payout', (byType.payout ?? 0n) + (byType.payout_return ?? 0n), moved('payout')],
    ];
    return checks.filter(([, ledger, rails]) => ledger !== rails).map(([kind, ledger, rails]) => ({
      kind, problem: `the ledger's ${kind} entries sum to ${ledger} but the rail transactions to ${rails}`,
    }));
  }

  /** Each rail transaction against the adapter's own record of it. */
  private async recordChecks(all: RailTransaction[]): Promise<Discrepancy[]> {
    const out: Discrepancy[] = [];
    const add = (t: RailTransaction, problem: string) => out.push({ transactionId: t.id, kind: t.kind, problem });
    for (const t of all) {
      if (out.length >= MAX_LISTED) break;
      const a = this.registry.find(t.treasuryProviderId);
      if (!a) {
        add(t, `its provider ${t.treasuryProviderId} is not configured`);
        continue;
      }
      if (t.kind === 'payout' && t.state === 'failed' && a.payouts) {
        // failed here and re-credited: the rail must not be sending it
        const rec = await a.payouts.lookup(t.id);
        if (rec && rec.state !== 'returned') add(t, `failed and re-credited here, but the rail holds it as ${rec.state} (${rec.externalRef}): the money may go out twice`);
        continue;
      }
      const ref = t.externalRef;
      if (ref === null) continue; // a payout not handed to its rail yet, or whose submission's outcome is not known yet
      if (t.kind === 'topup' && a.topUps) {
        const rec = await a.topUps.lookup(ref);
        if (!rec) add(t, `the processor has no intent ${ref}`);
        else if (rec.amountMinor !== t.railAmountMinor) add(t, `the processor's amount is ${rec.amountMinor}, ours ${t.railAmountMinor}`);
        else if (t.state === 'confirmed' && rec.status !== 'succeeded') add(t, `credited, but the processor says ${rec.status}`);
        else if (t.state === 'pending' && rec.status !== 'pending') add(t, `the processor says ${rec.status} but no webhook was applied`);
      } else if (t.kind === 'deposit' && a.deposits) {
        const rec = await a.deposits.lookupDeposit(ref);
        if (!rec) add(t, `the chain has no transfer ${ref}`);
        else if (rec.amountMinor !== t.railAmountMinor) add(t, `the chain's amount is ${rec.amountMinor}, ours ${t.railAmountMinor}`);
      } else if (t.kind === 'payout' && a.payouts) {
        const rec = await a.payouts.status(ref);
        if (!rec) add(t, `the rail has no payout ${ref}`);
        else if (rec.amountMinor !== t.railAmountMinor) add(t, `the rail's amount is ${rec.amountMinor}, ours ${t.railAmountMinor}`);
        else if (t.state === 'confirmed' && rec.state === 'returned') add(t, 'confirmed here, returned at the rail');
        else if (t.state === 'returned' && rec.state !== 'returned') add(t, `returned here, ${rec.state} at the rail`);
      }
    }
    return out;
  }
}
