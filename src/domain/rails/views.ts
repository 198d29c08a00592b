/** Wire forms of the rails' records: amounts as strings, times as ISO strings. */
import { iso } from '../../core/clock.js';
import type { DepositAddress, PayoutDestination, RailTransaction } from '../../store/repos/rails.js';
import { RAILS, type Rail } from './adapters.js';
import { formatPrice } from './pricing.js';
import type { DepositAddress as DepositAddressView, Payout, PayoutDestination as PayoutDestinationView, RailTransaction as RailTransactionView, TopUpIntent } from 'agentpay-sdk/contract';

const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

/**
 * The USD the transaction has moved on the wallet and still moves: + for money in once
 * credited, - for a payout on its way or paid, 0 when nothing moved or it came back.
 */
export function creditedMinor(t: RailTransaction): bigint {
  if (t.usdAmountMinor === null) return 0n;
  if (t.kind === 'payout') return t.state === 'submitted' || t.state === 'confirmed' ? -t.usdAmountMinor : 0n;
  return t.state === 'confirmed' ? t.usdAmountMinor : 0n;
}

/** An item of GET /v1/rail/transactions. */
export function railTransactionView(t: RailTransaction): RailTransactionView {
  return {
    id: t.id,
    kind: t.kind,
    direction: t.kind === 'payout' ? 'out' : 'in',
    walletId: t.walletId,
    treasuryProviderId: t.treasuryProviderId,
    rail: t.rail as Rail | null, // the store keeps only RAILS here
    state: t.state,
    railAmountMinor: t.railAmountMinor.toString(),
    railCurrency: t.railCurrency,
    usdAmountMinor: t.usdAmountMinor === null ? null : t.usdAmountMinor.toString(),
    creditedMinor: creditedMinor(t).toString(),
    usdcPrice: t.priceMicros === null ? null : formatPrice(t.priceMicros),
    externalRef: t.externalRef,
    counterparty: t.counterparty,
    reason: t.reason,
    createdAt: iso(t.createdAt),
    updatedAt: iso(t.updatedAt),
    settledAt: isoOrNull(t.settledAt),
  };
}

/** The top-up intent of POST /v1/wallets/:id/topup. */
export function intentView(t: RailTransaction, extra: { clientSecret?: string } = {}): TopUpIntent {
  return {
    externalRef: t.externalRef!,
    status: t.state,
    amountMinor: t.railAmountMinor.toString(),
    currency: t.railCurrency,
    ...(t.hostedUrl && t.state === 'pending' ? { hostedUrl: t.hostedUrl } : {}),
    ...(extra.clientSecret ? { clientSecret: extra.clientSecret } : {}),
    ...(t.state === 'declined' ? { declineReason: t.reason ?? 'declined' } : {}),
    transactionId: t.id,
    walletId: t.walletId,
    treasuryProviderId: t.treasuryProviderId,
    createdAt: iso(t.createdAt),
  };
}

/** A payout of POST/GET /v1/payouts. */
export function payoutView(t: RailTransaction): Payout {
  return {
    id: t.id,
    walletId: t.walletId,
    providerId: t.tenantId,
    amountMinor: (t.usdAmountMinor ?? 0n).toString(),
    currency: 'USD',
    // a payout is made with its rail and destination, and leaves pending as it is made (payouts.ts)
    rail: t.rail as Rail,
    destination: t.counterparty!,
    treasuryProviderId: t.treasuryProviderId,
    status: t.state as Payout['status'],
    railAmountMinor: t.railAmountMinor.toString(),
    railCurrency: t.railCurrency,
    usdcPrice: t.priceMicros === null ? null : formatPrice(t.priceMicros),
    externalRef: t.externalRef,
    expectedBy: isoOrNull(t.expectedBy),
    reason: t.reason,
    createdAt: iso(t.createdAt),
    updatedAt: iso(t.updatedAt),
    settledAt: isoOrNull(t.settledAt),
  };
}

export function depositAddressView(a: DepositAddress): DepositAddressView {
  return { address: a.address, chain: a.chain, asset: a.asset, walletId: a.walletId, treasuryProviderId: a.treasuryProviderId, createdAt: iso(a.createdAt) };
}

/** The rails a destination serves: USD bank destinations serve bank_transfer and ach. */
export const railsOf = (d: Pick<PayoutDestination, 'asset'>): Rail[] => RAILS.filter((r) => (r === 'usdc_base' ? d.asset === 'USDC' : d.asset === 'USD'));

export function destinationView(d: PayoutDestination, now: number): PayoutDestinationView {
  return {
    id: d.id,
    providerId: d.providerId,
    asset: d.asset,
    chain: d.chain || null,
    destination: d.destination,
    rails: railsOf(d),
    createdAt: iso(d.createdAt),
    usableAt: iso(d.usableAt),
    usable: now >= d.usableAt,
  };
}
