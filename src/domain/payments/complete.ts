/**
 * Completion of a paid call: in one database transaction the breaker count resets, the
 * signed success receipt is stored, the hold is captured from the buyer, the seller's
 * settlement wallet gets the price less the fee and the platform revenue wallet gets the
 * fee. Repeating the same complete returns the same receipt.
 *
 * A metered call (docs/protocol.md § Metered prices) is charged the units the seller reports
 * times the unit price it was authorized at: the capture takes that much, the rest of the hold
 * is released to the buyer (a `release` entry), and the fee is on the amount charged. Units
 * costing more than the hold are refused (USAGE_ABOVE_MAXIMUM) and nothing moves.
 */
import { createHash } from 'node:crypto';
import { AppError, validationError } from '../../core/errors.js';
import { MAX_KEPT_RESPONSE_BYTES } from './idempotency.js';
import { feeFor } from '../../core/money.js';
import type { Repos } from '../../store/store.js';
import type { PaymentIdempotency, Transaction } from '../../store/repos/payments.js';
import type { SettlementWallets } from './settlement-wallets.js';
import type { Principal } from '../tenancy/api-keys.js';
import { placeAll, type Movement } from '../wallets/ledger.js';
import { receiptView, writeReceipt, type ReceiptView } from './receipts.js';
import { PLATFORM_REVENUE_WALLET_ID } from '../tenancy/tenants.js';
import { recordSuccess } from './breaker.js';
import { recordPaymentEvent } from './events.js';
import { requireProvider, type PaymentDeps } from './deps.js';
import { alreadyResolved, expireTransaction, isOverdue, ownTransaction } from './resolution.js';
import { chargeFor, parseUnits } from '../market/metering.js';
import type { ReceiptUsage } from '../../store/tables/payments.js';

export interface CompleteInput {
  transactionId: string;
  /** `sha256:` and the lowercase hex SHA-256 of the exact response bytes */
  responseHash: string;
  /**
   * The answer itself (body in base64, hashing to `responseHash`), kept for replays when the
   * call was authorized with an idempotency key; ignored otherwise.
   */
  response?: { status: number; contentType?: string; body: string };
  /**
   * A metered capability only: the units the call used (a count as a string). The call is charged
   * units × the unit price it was authorized at, at most the hold; left out, the whole hold.
   */
  units?: string;
}

/** The answer to keep for a replay, checked against the hash the receipt signs; null when none was sent or it is too big. */
function keptResponse(input: CompleteInput): { status: number; contentType: string | null; body: string } | null {
  const r = input.response;
  if (!r) return null;
  if (r.body.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(r.body)) {
    throw validationError('response.body', 'is not base64 (standard alphabet, padded)');
  }
  const bytes = Buffer.from(r.body, 'base64');
  const hash = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
  if (hash !== input.responseHash) throw validationError('response.body', `hashes to ${hash}, not the responseHash ${input.responseHash}: send the exact bytes of the answer`);
  if (bytes.length > MAX_KEPT_RESPONSE_BYTES) return null;
  return { status: r.status, contentType: r.contentType ?? null, body: r.body };
}

/** `settlement`: the settlement wallets this process has read (the gateway's PaymentService keeps one). */
export async function completeTransaction(deps: PaymentDeps, p: Principal, input: CompleteInput, settlement?: SettlementWallets): Promise<ReceiptView> {
  requireProvider(p);
  const { ctx } = deps;
  const response = keptResponse(input);
  const units = input.units === undefined ? undefined : parseUnits(input.units, 'units', { allowZero: true });
  const out = await ctx.store.tx(async (r) => {
    // the transaction (locked: it resolves once), the seller's settlement wallet (the caller's, if
    // the transaction is theirs; read once per process) and an idempotency key of the purchase,
    // asked for at once
    const remembered = settlement?.of(p.tenantId);
    const [txn, provider, key] = await Promise.all([
      ownTransaction(r, p, input.transactionId),
      remembered === undefined ? r.tenants.get(p.tenantId) : undefined,
      r.paymentIdempotency.byTransaction(input.transactionId),
    ]);
    const payTo = remembered ?? provider?.settlementWalletId ?? undefined;
    if (txn.status === 'succeeded') {
      const receipt = (await r.receipts.byTransaction(txn.id)).find((x) => x.status === 'success');
      if (receipt && receipt.responseHash === input.responseHash && (units === undefined || receipt.usage?.units === units.toString())) {
        await keepAnswer(r, key, response);
        return { receipt: receiptView(receipt) };
      }
      return { conflict: alreadyResolved(txn, receipt?.responseHash === input.responseHash ? `was already completed for ${receipt.usage?.units ?? 'other'} units` : 'was already completed with another responseHash') };
    }
    if (txn.status !== 'authorized') return { conflict: alreadyResolved(txn) };
    const now = ctx.clock.now();
    if (isOverdue(txn, now)) {
      await expireTransaction(r, deps, txn);
      return { conflict: alreadyResolved({ ...txn, status: 'expired' }, 'expired before it was completed and the buyer was refunded') };
    }
    if (units !== undefined && txn.metering === null) {
      throw validationError('units', `capability ${txn.capabilityId} is not metered (its calls cost a flat price): leave units out`, { transactionId: txn.id });
    }
    if (!payTo) throw new AppError('INTERNAL', `provider ${txn.providerId} has no settlement wallet`);
    settlement?.remember(p.tenantId, payTo);
    return { receipt: await succeed(deps, r, txn, payTo, key, response, input.responseHash, now, units) };
  });
  if ('conflict' in out) throw out.conflict;
  return out.receipt;
}

type KeptResponse = ReturnType<typeof keptResponse>;

/** An idempotency key still in progress for this transaction is completed with the answer. */
async function keepAnswer(r: Repos, key: PaymentIdempotency | undefined, response: KeptResponse): Promise<void> {
  if (key && key.state === 'in_progress') await r.paymentIdempotency.complete(key.transactionId, response);
}

/**
 * The transaction succeeds: resolved once (Transactions.resolve refuses one resolved first
 * elsewhere, with the whole database transaction), the breaker count reset, the idempotency key's
 * answer kept, the money moved (placed by the store, which locks each wallet until the commit:
 * every sale of a seller, and every fee, moves the same wallet, so this comes late) and the
 * success receipt written.
 */
export async function succeed(
  deps: PaymentDeps, r: Repos, txn: Transaction, payTo: string, key: PaymentIdempotency | undefined, response: KeptResponse, responseHash: string, now: number,
  units?: bigint,
): Promise<ReceiptView> {
  const { ctx } = deps;
  // a metered call reported its units: charged units × the unit price it was authorized at (at most the hold)
  const metered = units !== undefined && txn.metering !== null ? txn.metering : null;
  const charged = metered ? chargeFor(units!, BigInt(metered.unitPriceMinor), txn.amountMinor, txn.id) : txn.amountMinor;
  const released = txn.amountMinor - charged;
  const usage: ReceiptUsage | null = metered ? { unit: metered.unit, units: units!.toString(), unitPriceMinor: metered.unitPriceMinor, authorizedMinor: txn.amountMinor.toString() } : null;
  const fee = feeFor(charged, deps.settings.feeBps);
  const sale = charged - fee;
  await r.transactions.resolve(txn.id, { status: 'succeeded', feeMinor: fee, resolvedAt: now, ...(metered ? { chargedMinor: charged } : {}) });
  await recordSuccess(r, now, txn.walletId, txn.providerId);
  await keepAnswer(r, key, response);
  const common = { currency: txn.currency, transactionId: txn.id, reference: txn.capabilityId };
  // in the lock order of docs/deploy.md: the buyer's wallet, the seller's, the platform's
  const movements: Movement[] = [{ ...common, walletId: txn.walletId, type: 'capture', amountMinor: -charged, holdMinor: -charged, memo: `paid for a call of ${txn.capabilityId}${usage ? ` (${usage.units} ${usage.unit} at ${usage.unitPriceMinor})` : ''}` }];
  if (released > 0n) movements.push({ ...common, walletId: txn.walletId, type: 'release', amountMinor: 0n, holdMinor: -released, memo: `the rest of the hold for a metered call of ${txn.capabilityId}: ${usage!.units} of ${BigInt(txn.amountMinor) / BigInt(usage!.unitPriceMinor)} ${usage!.unit} used` });
  if (sale > 0n) movements.push({ ...common, walletId: payTo, type: 'sale', amountMinor: sale, memo: `sale of a call of ${txn.capabilityId}` });
  if (fee > 0n) movements.push({ ...common, walletId: PLATFORM_REVENUE_WALLET_ID, type: 'fee', amountMinor: fee, memo: `platform fee on ${txn.id}` });
  const entries = await placeAll(r, ctx, movements);
  const receipt = await writeReceipt(r, deps, { ...txn, status: 'succeeded', chargedMinor: metered ? charged : null }, 'success', responseHash, entries, usage);
  // the sale's event, for the seller and the buyer's workspace: written, nothing read (./events.ts)
  // a metered call's event names the charge as its amount, and what was authorized (held) beside it
  await recordPaymentEvent(r, ctx, 'payment.succeeded', metered ? { ...txn, amountMinor: charged } : txn, receipt, {
    feeMinor: fee.toString(), saleMinor: sale.toString(), responseHash, ...(metered ? { authorizedMinor: txn.amountMinor.toString() } : {}),
  });
  return receipt;
}
