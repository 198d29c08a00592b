/**
 * POST /v1/payouts, and handing a payout to its rail (the first time, or again from the rail
 * job): the checks, the debit with the `submitted` record in one transaction, then the rail.
 * The rules are at the top of ./service.ts.
 */
import { createHash } from 'node:crypto';
import { AppError, validationError, wrongKeyKind } from '../../../core/errors.js';
import { canonicalize } from 'agentpay-sdk/contract';
import { parseMinor } from '../../../core/money.js';
import type { Repos } from '../../../store/store.js';
import type { RailTransaction } from '../../../store/repos/rails.js';
import type { Principal } from '../../tenancy/api-keys.js';
import { balanceOf, post } from '../../wallets/ledger.js';
import { RAIL_ASSET, RailUnavailable, type Rail } from '../adapters.js';
import { formatPrice, inBand, usdToUsdcUnits } from '../pricing.js';
import { payoutView } from '../views.js';
import { reverse, unavailable, type PayoutDeps } from './shared.js';
import { iso } from '../../../core/clock.js';

export interface PayoutInput {
  walletId: string;
  amountMinor: unknown;
  rail: Rail;
  destination?: string;
  treasuryProviderId?: string;
}

export type PayoutResult = { payout: ReturnType<typeof payoutView>; replayed: boolean };

function replay(existing: RailTransaction, requestHash: string, key: string): PayoutResult {
  if (existing.requestHash !== requestHash) {
    throw new AppError('CONFLICT', `idempotency-key ${JSON.stringify(key)} was used for a different payout request; use a new key for a new payout`, { payoutId: existing.id });
  }
  return { payout: payoutView(existing), replayed: true };
}

export async function createPayout(deps: PayoutDeps, p: Principal, input: PayoutInput, idempotencyKey?: string): Promise<PayoutResult> {
  if (p.tenantKind !== 'provider') throw wrongKeyKind(['provider'], 'payouts are made with a provider key, from its settlement wallet');
  const amount = parseMinor(input.amountMinor, 'amountMinor');
  const requestHash = createHash('sha256').update(canonicalize({
    walletId: input.walletId, amountMinor: amount.toString(), rail: input.rail,
    destination: input.destination ?? null, treasuryProviderId: input.treasuryProviderId ?? null,
  })).digest('hex');
  if (idempotencyKey !== undefined) {
    const existing = await deps.ctx.store.read((r) => r.railTransactions.byIdempotencyKey(p.tenantId, idempotencyKey));
    if (existing) return replay(existing, requestHash, idempotencyKey);
  }

  const wallet = await deps.wallets.get(p, input.walletId);
  if (wallet.ownerType !== 'settlement') throw validationError('walletId', 'must be your settlement wallet (tenant.walletId)');
  const adapter = deps.registry.payoutProvider(input.rail, input.treasuryProviderId);
  const { asset, chain } = RAIL_ASSET[input.rail];

  const check = async (r: Repos) => {
    const dest = await r.payoutDestinations.current(p.tenantId, asset, chain);
    if (!dest) {
      throw validationError('destination', `no ${asset} payout destination is registered for ${input.rail}; register one with PUT /v1/providers/${p.tenantId}/payout-destination`, { reason: 'no_payout_destination' });
    }
    if (input.destination !== undefined && input.destination.trim().toLowerCase() !== dest.normalized) {
      throw validationError('destination', `is not your registered ${input.rail} destination; register it first (a change freezes payouts for 24 hours), or omit it`);
    }
    const now = deps.ctx.clock.now();
    if (now < dest.usableAt) {
      throw new AppError('DESTINATION_COOLING_DOWN', `the ${asset} payout destination changed recently; payouts on ${input.rail} resume at ${iso(dest.usableAt)}`, {
        rail: input.rail, asset, usableAt: iso(dest.usableAt),
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
  const dest = await deps.ctx.store.read(check);

  // screening and pricing are outside services: never inside a store transaction
  const screening = deps.registry.screening;
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
    const pricing = deps.registry.pricing;
    if (!pricing) throw unavailable('pricing', 'no USDC price feed is configured');
    try {
      priceMicros = await pricing.usdcPriceMicros();
    } catch (e) {
      if (e instanceof RailUnavailable) throw unavailable(e.service, e.message);
      throw e;
    }
    if (!inBand(priceMicros, deps.settings.priceBandBps)) {
      throw unavailable('pricing', `USDC is at ${formatPrice(priceMicros)} USD, outside ±${deps.settings.priceBandBps / 100}% of 1 USD`, { usdcPrice: formatPrice(priceMicros) });
    }
    railAmount = usdToUsdcUnits(amount, priceMicros);
  }

  // marked (inside the debiting transaction, before the rail job can see the row) while its
  // first submission runs: the job leaves it alone until then
  let payoutId: string | undefined;
  try {
    const created = await deps.ctx.store.tx(async (r): Promise<{ replay: PayoutResult } | { row: RailTransaction }> => {
      if (idempotencyKey !== undefined) {
        const existing = await r.railTransactions.byIdempotencyKey(p.tenantId, idempotencyKey);
        if (existing) return { replay: replay(existing, requestHash, idempotencyKey) };
      }
      const d = await check(r);
      const now = deps.ctx.clock.now();
      const row: RailTransaction = {
        id: deps.ctx.ids.next('payout'), kind: 'payout', tenantId: p.tenantId, walletId: wallet.id, treasuryProviderId: adapter.info.id,
        rail: input.rail, state: 'submitted', railAmountMinor: railAmount, railCurrency: asset, usdAmountMinor: amount, externalRef: null,
        counterparty: d.destination, priceMicros, reason: null, idempotencyKey: idempotencyKey ?? null, requestHash,
        hostedUrl: null, expectedBy: null, resubmittedAt: null, createdAt: now, updatedAt: now, settledAt: null,
      };
      await r.railTransactions.insert(row);
      await post(r, deps.ctx, { walletId: wallet.id, type: 'payout', amountMinor: -amount, currency: 'USD', reference: `payout:${row.id}`, memo: `payout on ${input.rail}` });
      payoutId = row.id;
      deps.firstSubmissions.add(row.id);
      return { row };
    });
    if ('replay' in created) return created.replay;
    return { payout: payoutView(await submitPayout(deps, created.row, 'first')), replayed: false };
  } finally {
    if (payoutId !== undefined) deps.firstSubmissions.delete(payoutId);
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
export async function submitPayout(deps: PayoutDeps, t: RailTransaction, attempt: 'first' | 'again'): Promise<RailTransaction> {
  // marked while the rail may be taking it: the operator's resolution waits for the answer
  deps.submitting.add(t.id);
  try {
    return await handOver(deps, t, attempt);
  } finally {
    deps.submitting.delete(t.id);
  }
}

async function handOver(deps: PayoutDeps, t: RailTransaction, attempt: 'first' | 'again'): Promise<RailTransaction> {
  const adapter = deps.registry.find(t.treasuryProviderId);
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
    if (!(await reverse(deps, t, 'failed', `submission refused: ${e.message}`))) {
      return (await deps.ctx.store.read((r) => r.railTransactions.get(t.id)))!;
    }
    throw unavailable(e.service, e.message, { payoutId: t.id });
  }
  const patch = { externalRef: sent.externalRef, expectedBy: sent.expectedBy, updatedAt: deps.ctx.clock.now() };
  // only a payout still submitted gets the reference: a failed one keeps none (reconciliation
  // finds a failed payout the rail holds by its id); and only once: the rail job of another
  // instance may submit the same payout again while this submission runs (the rail knows it by
  // its id, so both get the same reference), and the answer of the first request must stay
  // the record every retry of it reads
  return deps.ctx.store.tx(async (r) => {
    await r.railTransactions.recordReference(t.id, patch);
    return (await r.railTransactions.get(t.id))!;
  });
}
