/**
 * Payouts from a provider's settlement wallet to its registered destination.
 *
 * A payout is checked (destination usable, payouts not paused by reconciliation,
 * screening, pricing for USDC, funds), then in one transaction the wallet is debited
 * (`payout` entry) and the payout recorded as `submitted`; only then is the rail asked
 * to send it. It later becomes `confirmed`, or `returned` with a new `payout_return`
 * entry re-crediting the wallet. If the rail refuses that first submission
 * (RailUnavailable) the payout is `failed`, re-credited at once, and the request answers
 * 503 TREASURY_UNAVAILABLE. Any other error of the rail (a lost response, a timeout)
 * leaves the outcome unknown: the rail may hold the payout. It stays `submitted`
 * without an external reference, the request answers it, and the rail job submits it
 * again (the rail's submit is idempotent on the payout id) until the rail answers;
 * a re-submission is never reversed, even when refused, since an earlier attempt may
 * be on its way.
 *
 * A payout its rail never resolves stays `submitted`; the operator, having asked the rail out
 * of band, closes it out with `resolve`: `paid` (confirmed; the debit stands) or `failed`
 * (re-credited as a refused submission is), with a reason, unless the rail's own record
 * (`lookup`) contradicts that. It races the rail job like any resolution: one wins.
 *
 * Idempotency: with an `idempotency-key`, the same key and body answer the first
 * payout (however many times, however concurrently: the key is unique per provider and
 * checked inside the debiting transaction); the same key with another body is 409
 * CONFLICT. A failed payout frees its key, so retrying later with it is a new attempt.
 */
import { createHash } from 'node:crypto';
import { AppError, validationError, wrongKeyKind } from '../../core/errors.js';
import { canonicalize } from 'agentpay-sdk/contract';
import { parseIsoTime } from '../../core/clock.js';
import { parseMinor } from '../../core/money.js';
import type { Repos } from '../../store/store.js';
import type { RailTransaction } from '../../store/repos/rails.js';
import type { Principal } from '../api-keys.js';
import type { DomainContext } from '../context.js';
import { balanceOf, post } from '../ledger.js';
import type { WalletService } from '../wallets.js';
import { RAIL_ASSET, RailUnavailable, type Rail } from './adapters.js';
import type { RailsSettings } from './config.js';
import { OPERATOR_TENANT_ID } from '../tenants.js';
import { recordEvent } from '../events.js';
import { formatPrice, inBand, usdToUsdcUnits } from './pricing.js';
import type { RailRegistry } from './registry.js';
import { payoutView } from './views.js';

export interface PayoutInput {
  walletId: string;
  amountMinor: unknown;
  rail: Rail;
  destination?: string;
  treasuryProviderId?: string;
}

/** The payouts' states, as `status` of a payout and the filter of GET /v1/payouts. */
export const PAYOUT_STATUSES = ['submitted', 'confirmed', 'returned', 'failed'] as const;
export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];

/** GET /v1/payouts: a page, optionally only payouts in one status, submitted before an ISO time. */
export interface PayoutListInput {
  limit?: number;
  after?: string;
  status?: PayoutStatus;
  submittedBefore?: string;
}

export type PayoutResult = { payout: ReturnType<typeof payoutView>; replayed: boolean };

/** What the operator found out from the rail: the money left (`paid`) or it did not (`failed`). */
export const RESOLVE_OUTCOMES = ['paid', 'failed'] as const;
export type ResolveOutcome = (typeof RESOLVE_OUTCOMES)[number];

/** The rail's own record of a payout, as the operator's resolution checks it. */
type RailRecordState = 'submitted' | 'confirmed' | 'returned' | 'none' | 'unavailable';

const unavailable = (service: string, message: string, details: Record<string, unknown> = {}) =>
  new AppError('TREASURY_UNAVAILABLE', `${message}; payouts on this rail are paused, retry later`, { service, ...details });

export class PayoutService {
  /** payouts whose first submission (the only one that may reverse them) is running now */
  private readonly firstSubmissions = new Set<string>();
  /** payouts being handed to their rail by this process now (first or again) */
  private readonly submitting = new Set<string>();

  constructor(
    private ctx: DomainContext,
    private registry: RailRegistry,
    private wallets: WalletService,
    private settings: Pick<RailsSettings, 'priceBandBps'>,
  ) {}

  private replay(existing: RailTransaction, requestHash: string, key: string): PayoutResult {
    if (existing.requestHash !== requestHash) {
      throw new AppError('CONFLICT', `idempotency-key ${JSON.stringify(key)} was used for a different payout request; use a new key for a new payout`, { payoutId: existing.id });
    }
    return { payout: payoutView(existing), replayed: true };
  }

  async create(p: Principal, input: PayoutInput, idempotencyKey?: string): Promise<PayoutResult> {
    if (p.tenantKind !== 'provider') throw wrongKeyKind(['provider'], 'payouts are made with a provider key, from its settlement wallet');
    const amount = parseMinor(input.amountMinor, 'amountMinor');
    const requestHash = createHash('sha256').update(canonicalize({
      walletId: input.walletId, amountMinor: amount.toString(), rail: input.rail,
      destination: input.destination ?? null, treasuryProviderId: input.treasuryProviderId ?? null,
    })).digest('hex');
    if (idempotencyKey !== undefined) {
      const existing = await this.ctx.store.read((r) => r.railTransactions.byIdempotencyKey(p.tenantId, idempotencyKey));
      if (existing) return this.replay(existing, requestHash, idempotencyKey);
    }

    const wallet = await this.wallets.get(p, input.walletId);
    if (wallet.ownerType !== 'settlement') throw validationError('walletId', 'must be your settlement wallet (tenant.walletId)');
    const adapter = this.registry.payoutProvider(input.rail, input.treasuryProviderId);
    const { asset, chain } = RAIL_ASSET[input.rail];

    const check = async (r: Repos) => {
      const dest = await r.payoutDestinations.current(p.tenantId, asset, chain);
      if (!dest) {
        throw validationError('destination', `no ${asset} payout destination is registered for ${input.rail}; register one with PUT /v1/providers/${p.tenantId}/payout-destination`, { reason: 'no_payout_destination' });
      }
      if (input.destination !== undefined && input.destination.trim().toLowerCase() !== dest.normalized) {
        throw validationError('destination', `is not your registered ${input.rail} destination; register it first (a change freezes payouts for 24 hours), or omit it`);
      }
      const now = this.ctx.clock.now();
      if (now < dest.usableAt) {
        throw new AppError('DESTINATION_COOLING_DOWN', `the ${asset} payout destination changed recently; payouts on ${input.rail} resume at ${new Date(dest.usableAt).toISOString()}`, {
          rail: input.rail, asset, usableAt: new Date(dest.usableAt).toISOString(),
        });
      }
      if ((await r.reconciliations.latest())?.status === 'shortfall') {
        throw new AppError('COVERAGE_SHORTFALL', 'payouts are paused: reconciliation found the rails holding less than the platform owes; retry later', {});
      }
      const w = (await r.wallets.get(wallet.id))!;
      if (w.frozen) throw new AppError('WALLET_FROZEN', `wallet ${w.id} is frozen; unfreeze it to pay out`, { walletId: w.id });
      const b = await balanceOf(r, w.id);
      if (b.availableMinor < amount) {
        throw new AppError('INSUFFICIENT_FUNDS', `the payout of ${amount} exceeds the available balance ${b.availableMinor} of wallet ${w.id}`, {
          walletId: w.id, availableMinor: b.availableMinor.toString(),
        });
      }
      return dest;
    };
    // refusals first, before the slow outside checks
    const dest = await this.ctx.store.read(check);

    // screening and pricing are outside services: never inside a store transaction
    const screening = this.registry.screening;
    if (!screening) throw unavailable('screening', 'no sanctions screening service is configured');
    let verdict: 'clear' | 'sanctioned';
    try {
      verdict = await screening.screen(dest.destination);
    } catch (e) {
      if (e instanceof RailUnavailable) throw unavailable(e.service, e.message);
      throw e;
    }
    if (verdict === 'sanctioned') {
      throw new AppError('SANCTIONED_ADDRESS', `sanctions screening blocked the destination ${dest.destination}; no money moved`, { destination: dest.destination });
    }
    let railAmount = amount;
    let priceMicros: bigint | null = null;
    if (asset === 'USDC') {
      const pricing = this.registry.pricing;
      if (!pricing) throw unavailable('pricing', 'no USDC price feed is configured');
      try {
        priceMicros = await pricing.usdcPriceMicros();
      } catch (e) {
        if (e instanceof RailUnavailable) throw unavailable(e.service, e.message);
        throw e;
      }
      if (!inBand(priceMicros, this.settings.priceBandBps)) {
        throw unavailable('pricing', `USDC is at ${formatPrice(priceMicros)} USD, outside ±${this.settings.priceBandBps / 100}% of 1 USD`, { usdcPrice: formatPrice(priceMicros) });
      }
      railAmount = usdToUsdcUnits(amount, priceMicros);
    }

    // marked (inside the debiting transaction, before the rail job can see the row) while its
    // first submission runs: the job leaves it alone until then
    let payoutId: string | undefined;
    try {
      const created = await this.ctx.store.tx(async (r): Promise<{ replay: PayoutResult } | { row: RailTransaction }> => {
        if (idempotencyKey !== undefined) {
          const existing = await r.railTransactions.byIdempotencyKey(p.tenantId, idempotencyKey);
          if (existing) return { replay: this.replay(existing, requestHash, idempotencyKey) };
        }
        const d = await check(r);
        const now = this.ctx.clock.now();
        const row: RailTransaction = {
          id: this.ctx.ids.next('payout'), kind: 'payout', tenantId: p.tenantId, walletId: wallet.id, treasuryProviderId: adapter.info.id,
          rail: input.rail, state: 'submitted', railAmountMinor: railAmount, railCurrency: asset, usdAmountMinor: amount, externalRef: null,
          counterparty: d.destination, priceMicros, reason: null, idempotencyKey: idempotencyKey ?? null, requestHash,
          hostedUrl: null, expectedBy: null, resubmittedAt: null, createdAt: now, updatedAt: now, settledAt: null,
        };
        await r.railTransactions.insert(row);
        await post(r, this.ctx, { walletId: wallet.id, type: 'payout', amountMinor: -amount, currency: 'USD', reference: `payout:${row.id}`, memo: `payout on ${input.rail}` });
        payoutId = row.id;
        this.firstSubmissions.add(row.id);
        return { row };
      });
      if ('replay' in created) return created.replay;
      return { payout: payoutView(await this.submit(created.row, 'first')), replayed: false };
    } finally {
      if (payoutId !== undefined) this.firstSubmissions.delete(payoutId);
    }
  }

  /**
   * Hands a submitted payout to its rail (idempotent at the rail: the payout id is the key)
   * and records the rail's reference. Only a refusal (RailUnavailable) of the `first`
   * submission, the one POST /v1/payouts makes, reverses it: the payout becomes `failed`,
   * the wallet is re-credited and 503 TREASURY_UNAVAILABLE is thrown. Any other error of
   * the first submission leaves the outcome unknown: the payout is answered as it is
   * (`submitted`, no reference) for the rail job to submit `again`. A submission `again`
   * refused or failing throws and changes nothing: the rail may hold an earlier attempt.
   */
  async submit(t: RailTransaction, attempt: 'first' | 'again'): Promise<RailTransaction> {
    // marked while the rail may be taking it: the operator's resolution waits for the answer
    this.submitting.add(t.id);
    try {
      return await this.handOver(t, attempt);
    } finally {
      this.submitting.delete(t.id);
    }
  }

  private async handOver(t: RailTransaction, attempt: 'first' | 'again'): Promise<RailTransaction> {
    const adapter = this.registry.find(t.treasuryProviderId);
    let sent: { externalRef: string; expectedBy: number };
    try {
      if (!adapter?.payouts) throw new RailUnavailable('payouts', `payout provider ${t.treasuryProviderId} is no longer configured`);
      sent = await adapter.payouts.submit({ payoutId: t.id, rail: t.rail as Rail, destination: t.counterparty!, amountMinor: t.railAmountMinor, asset: t.railCurrency });
    } catch (e) {
      if (attempt === 'again') {
        if (e instanceof RailUnavailable) throw unavailable(e.service, `${e.message}; payout ${t.id} stays submitted and is submitted again later`, { payoutId: t.id });
        throw e;
      }
      if (!(e instanceof RailUnavailable)) return t; // unknown outcome: stays submitted, the rail job submits it again
      // refused: nothing reached the rail, unless the rail job handed it over meanwhile (another
      // process, or one that listed it before): then it stays submitted, answered as it is
      if (!(await this.reverse(t, 'failed', `submission refused: ${e.message}`))) {
        return (await this.ctx.store.read((r) => r.railTransactions.get(t.id)))!;
      }
      throw unavailable(e.service, e.message, { payoutId: t.id });
    }
    const patch = { externalRef: sent.externalRef, expectedBy: sent.expectedBy, updatedAt: this.ctx.clock.now() };
    // only a payout still submitted gets the reference: a failed one keeps none (reconciliation
    // finds a failed payout the rail holds by its id)
    return this.ctx.store.tx(async (r) => {
      await r.railTransactions.transition(t.id, ['submitted'], patch);
      return (await r.railTransactions.get(t.id))!;
    });
  }

  /**
   * submitted -> failed or returned, re-crediting the wallet with a new entry, once. Never
   * `failed` once the rail job has submitted it again (resubmittedAt): the rail may hold it.
   */
  private async reverse(t: RailTransaction, state: 'failed' | 'returned', reason: string): Promise<boolean> {
    return this.ctx.store.tx(async (r) => {
      if (state === 'failed' && (await r.railTransactions.get(t.id))?.resubmittedAt != null) return false;
      return this.reverseIn(r, t, state, reason);
    });
  }

  /** `reverse` inside the caller's transaction; false (nothing written) if it was no longer submitted. */
  private async reverseIn(r: Repos, t: RailTransaction, state: 'failed' | 'returned', reason: string): Promise<boolean> {
    const now = this.ctx.clock.now();
    const patch = { state, reason, updatedAt: now, settledAt: now, ...(state === 'failed' ? { idempotencyKey: null } : {}) };
    if (!(await r.railTransactions.transition(t.id, ['submitted'], patch))) return false;
    await post(r, this.ctx, {
      walletId: t.walletId, type: 'payout_return', amountMinor: t.usdAmountMinor!, currency: 'USD', reference: `payout:${t.id}`,
      memo: state === 'returned' ? `payout returned: ${reason}` : `payout not sent: ${reason}`,
    });
    if (state === 'returned') {
      await recordEvent(r, this.ctx, t.tenantId, 'payout.returned', { payoutId: t.id, amountMinor: t.usdAmountMinor!.toString(), rail: t.rail, reason });
    }
    return true;
  }

  /**
   * Takes a payout whose first submission's outcome is unknown for submitting again: only one
   * still submitted without a rail reference (re-read: the caller's copy may be stale), and not
   * while its first submission runs in this process. Marks it (resubmittedAt) in the same
   * transaction, so that first submission, if the rail then refuses it, no longer reverses it.
   */
  async claimResubmission(t: RailTransaction): Promise<RailTransaction | undefined> {
    if (this.firstSubmissions.has(t.id)) return undefined;
    return this.ctx.store.tx(async (r) => {
      const current = await r.railTransactions.get(t.id);
      if (!current || current.state !== 'submitted' || current.externalRef !== null) return undefined;
      if (current.resubmittedAt !== null) return current;
      const resubmittedAt = this.ctx.clock.now();
      await r.railTransactions.update(t.id, { resubmittedAt });
      return { ...current, resubmittedAt };
    });
  }

  /** Follows one submitted payout at its rail: confirmed, returned, or still on its way. */
  async follow(t: RailTransaction): Promise<RailTransaction['state']> {
    if (t.state !== 'submitted') return t.state;
    if (t.externalRef === null) {
      // outcome unknown so far: submit again; refused or failing, it stays submitted and is retried
      const claimed = await this.claimResubmission(t);
      if (!claimed) return (await this.ctx.store.read((r) => r.railTransactions.get(t.id)))?.state ?? t.state;
      await this.submit(claimed, 'again').catch(() => undefined);
      return 'submitted';
    }
    const rec = await this.registry.find(t.treasuryProviderId)?.payouts?.status(t.externalRef);
    if (!rec || rec.state === 'submitted') return 'submitted';
    if (rec.state === 'returned') {
      await this.reverse(t, 'returned', rec.reason ?? 'returned by the rail');
      return 'returned';
    }
    const now = this.ctx.clock.now();
    await this.ctx.store.tx((r) => r.railTransactions.transition(t.id, ['submitted'], { state: 'confirmed', updatedAt: now, settledAt: now }));
    return 'confirmed';
  }

  /**
   * Follows every submitted payout, a page at a time (so payouts a rail never resolves cannot
   * keep newer ones from being followed); returns how many changed state.
   */
  async followAll(pageSize = 500): Promise<number> {
    let n = 0;
    let after: string | undefined;
    for (;;) {
      const page = await this.ctx.store.read((r) => r.railTransactions.listByState('payout', ['submitted'], pageSize, after));
      for (const t of page) if ((await this.follow(t)) !== 'submitted') n += 1;
      if (page.length < pageSize) return n;
      after = page.at(-1)!.id;
    }
  }

  /**
   * The operator closes out a payout its rail never resolved, having checked with the rail out
   * of band: `paid` (the money left: confirmed; the debit written at submission stands) or
   * `failed` (it did not: re-credited with a `payout_return` entry, as a refused submission is),
   * in one transaction with the reason and a `payout.resolved` event for the provider and the
   * operator. Refused (409) unless the payout is `submitted` and not being handed to its rail
   * by this process right now, and (RAIL_DISAGREES) when the rail's own record contradicts the
   * outcome: `failed` for a payout the rail paid would pay the provider twice, `paid` for one
   * it returned would keep the provider's money. A rail that cannot say leaves the operator's
   * word. The payout is re-read in the transaction, so against the rail job (or a second
   * operator) exactly one resolution wins; the other is refused and changes nothing.
   */
  async resolve(p: Principal, id: string, input: { outcome: ResolveOutcome; reason: string }) {
    if (p.tenantKind !== 'operator') throw wrongKeyKind(['operator'], 'only the operator resolves a payout by hand');
    const reason = input.reason.trim();
    if (reason === '') throw validationError('reason', 'is required: say what the rail told you about this payout (who, when, its reference)');
    const t = await this.ctx.store.read((r) => r.railTransactions.get(id));
    if (!t || t.kind !== 'payout') throw new AppError('NOT_FOUND', `payout ${id} not found`, { id });
    this.assertResolvable(t);

    // the rail's word, outside any transaction (a network call)
    const rail = await this.railRecord(t);
    const contradicts = input.outcome === 'failed' ? rail.state === 'confirmed' : rail.state === 'returned';
    if (contradicts) {
      const why = input.outcome === 'failed'
        ? `the rail reports payout ${id} paid (${rail.externalRef}); marking it failed would re-credit money the rail sent: resolve it as paid, or have the rail correct its record first`
        : `the rail reports payout ${id} returned (${rail.externalRef}): the money came back; resolve it as failed, or let the rail job re-credit it`;
      throw new AppError('RAIL_DISAGREES', why, { payoutId: id, outcome: input.outcome, railState: rail.state, externalRef: rail.externalRef ?? null });
    }

    return this.ctx.store.tx(async (r) => {
      // re-read: the rail job (or another operator) may have resolved it since
      const current = (await r.railTransactions.get(id))!;
      this.assertResolvable(current);
      const recorded = `resolved by the operator: ${reason}`;
      const now = this.ctx.clock.now();
      const moved = input.outcome === 'failed'
        ? await this.reverseIn(r, current, 'failed', recorded)
        : await r.railTransactions.transition(id, ['submitted'], { state: 'confirmed', reason: recorded, updatedAt: now, settledAt: now });
      if (!moved) throw this.notResolvable(id, (await r.railTransactions.get(id))!.state);
      const data = {
        payoutId: id, outcome: input.outcome, status: input.outcome === 'paid' ? 'confirmed' : 'failed',
        amountMinor: current.usdAmountMinor!.toString(), rail: current.rail, reason, railRecord: rail.state,
      };
      await recordEvent(r, this.ctx, current.tenantId, 'payout.resolved', data);
      // the operator's copy is the audit trail: which provider, and which key decided
      await recordEvent(r, this.ctx, OPERATOR_TENANT_ID, 'payout.resolved', { ...data, providerId: current.tenantId, resolvedBy: p.keyId });
      return payoutView((await r.railTransactions.get(id))!);
    });
  }

  private notResolvable(id: string, status: RailTransaction['state']): AppError {
    return new AppError('CONFLICT', `payout ${id} is already ${status}; only a submitted payout is resolved, once`, { payoutId: id, status });
  }

  /** Only a submitted payout that this process is not handing to its rail right now. */
  private assertResolvable(t: RailTransaction): void {
    if (t.state !== 'submitted') throw this.notResolvable(t.id, t.state);
    if (this.firstSubmissions.has(t.id) || this.submitting.has(t.id)) {
      throw new AppError('CONFLICT', `payout ${t.id} is being submitted to its rail right now; retry in a moment`, { payoutId: t.id, status: t.state });
    }
  }

  /** The rail's record of the payout by its id: its state, `none`, or `unavailable` when the rail cannot say. */
  private async railRecord(t: RailTransaction): Promise<{ state: RailRecordState; externalRef?: string }> {
    const rail = this.registry.find(t.treasuryProviderId)?.payouts;
    if (!rail) return { state: 'unavailable' };
    try {
      const rec = await rail.lookup(t.id);
      return rec ? { state: rec.state, externalRef: rec.externalRef } : { state: 'none' };
    } catch {
      return { state: 'unavailable' };
    }
  }

  async get(p: Principal, id: string) {
    return this.ctx.store.read(async (r) => {
      const t = await r.railTransactions.get(id);
      if (!t || t.kind !== 'payout' || (t.tenantId !== p.tenantId && p.tenantKind !== 'operator')) throw new AppError('NOT_FOUND', `payout ${id} not found`, { id });
      return payoutView(t);
    });
  }

  /**
   * Payouts, newest first: a provider's own, or, for the operator, every provider's (to find the
   * stuck ones: `status=submitted`, `submittedBefore` a day ago). `submittedBefore` is an ISO
   * time; a payout is submitted when it is created (debited and handed to its rail). `after` is
   * a payout the caller may see, whatever the filters: pages follow each other by position, so a
   * payout resolved between two pages does not break the paging.
   */
  async list(p: Principal, q: PayoutListInput) {
    if (p.tenantKind !== 'provider' && p.tenantKind !== 'operator') {
      throw wrongKeyKind(['provider', 'operator'], 'payouts are listed with a provider key (its own) or the operator key (every provider\'s)');
    }
    const limit = q.limit ?? 50;
    let createdBefore: number | undefined;
    if (q.submittedBefore !== undefined) {
      createdBefore = parseIsoTime(q.submittedBefore);
      if (createdBefore === undefined) {
        throw validationError('submittedBefore', 'must be an ISO 8601 time that exists, like 2026-11-20T00:00:00Z', { location: 'querystring' });
      }
    }
    const everyProvider = p.tenantKind === 'operator';
    return this.ctx.store.read(async (r) => {
      if (q.after !== undefined) {
        const at = await r.railTransactions.get(q.after);
        if (!at || at.kind !== 'payout' || (!everyProvider && at.tenantId !== p.tenantId)) {
          const what = everyProvider ? 'a payout' : 'a payout of yours';
          throw new AppError('INVALID_CURSOR', `after: ${q.after} is not ${what}; pass a nextCursor you were given`, { field: 'after' });
        }
      }
      const rows = await r.railTransactions.listPayouts({
        limit,
        ...(everyProvider ? {} : { tenantId: p.tenantId }),
        ...(q.status !== undefined ? { state: q.status } : {}),
        ...(createdBefore !== undefined ? { createdBefore } : {}),
        ...(q.after !== undefined ? { before: q.after } : {}),
      });
      return { payouts: rows.map(payoutView), ...(rows.length === limit ? { nextCursor: rows.at(-1)!.id } : {}) };
    });
  }
}
