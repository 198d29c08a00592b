/**
 * Authorization of a payment proof: the checks of docs/protocol.md in their order,
 * then, in one database transaction, the nonce, the transaction and the hold. The
 * signature checks run before the transaction (crypto is the slow part); everything
 * that depends on state runs inside it, so concurrent authorizations can neither
 * reuse a nonce nor overdraw a wallet.
 */
import { AppError, forbidden, isAppError, notFound, validationError } from '../../core/errors.js';
import { verifyObject } from '../../core/ed25519.js';
import { iso } from '../../core/clock.js';
import type { PurchaseFacts, Transaction } from '../../store/repos/payments.js';
import type { Wallet } from '../../store/repos/wallets.js';
import type { Capability } from '../../store/repos/market.js';
import type { Repos } from '../../store/store.js';
import { isUniqueViolation, MovementRefused } from '../../store/errors.js';
import type { Principal } from '../tenancy/api-keys.js';
import { insufficientFunds, place, type Movement } from '../wallets/ledger.js';
import { requireProvider, type PaymentDeps } from './deps.js';
import { expireOverdueOf } from './resolution.js';
import { parsePaymentProof } from './proof.js';
import type { VerificationKeys } from './verification-keys.js';
import type { IssuedChallenges } from './issued-challenges.js';
import { IDEMPOTENCY_WINDOW_MS } from './config.js';
import { checkKey, inProgress, type IdempotencyInput, type Replay } from './idempotency.js';

export interface AuthorizeInput {
  capabilityId: string;
  /** the proof object, or the x-payment header value as received */
  payment: unknown;
  /** the buyer's idempotency key for this call (optional; with `requestHash`) */
  idempotencyKey?: string;
  /** the seller's fingerprint of the request the key was sent with */
  requestHash?: string;
}

export type { Authorization } from 'agentpay-sdk/contract';
import type { Authorization } from 'agentpay-sdk/contract';

function replay(nonce: string): AppError {
  return new AppError('REPLAY_DETECTED', 'this payment proof was already used; the first use counted. Do not resend it: request a new challenge for another call', { nonce });
}


export async function authorizePayment(
  deps: PaymentDeps, keys: VerificationKeys, p: Principal, input: AuthorizeInput, issued?: IssuedChallenges,
): Promise<Authorization | Replay> {
  requireProvider(p);
  if ((input.idempotencyKey === undefined) !== (input.requestHash === undefined)) {
    throw validationError(input.idempotencyKey === undefined ? 'idempotencyKey' : 'requestHash', 'is required with the other: send both idempotencyKey and requestHash, or neither');
  }
  const idem: IdempotencyInput | undefined = input.idempotencyKey !== undefined ? { idempotencyKey: input.idempotencyKey, requestHash: input.requestHash! } : undefined;
  const { ctx } = deps;
  const { proof, amountMinor, expiresAtMs } = parsePaymentProof(input.payment);
  const challenge = proof.challenge;

  // exactly as signed by this process: the verify would pass, so it is skipped
  if (!issued?.signedHere(challenge)) {
    const platformKey = await keys.platformKey(challenge.signingKeyId);
    if (!platformKey || !verifyObject(platformKey, challenge)) {
      throw validationError('payment.challenge.signature', 'is not a valid platform signature over this challenge: it was altered, or not issued by this gateway');
    }
  }
  if (challenge.capabilityId !== input.capabilityId) {
    throw forbidden(`the proof pays for capability ${challenge.capabilityId}, not ${input.capabilityId}`, { capabilityId: input.capabilityId, paidCapabilityId: challenge.capabilityId });
  }
  if (challenge.providerId !== p.tenantId) throw forbidden('the proof pays another provider', { providerId: challenge.providerId });
  const expired = () => new AppError('CHALLENGE_EXPIRED', `the price challenge expired at ${challenge.expiresAt}; request a new challenge`, { expiresAt: challenge.expiresAt });
  // with an idempotency key, a retry of a call that succeeded is answered even on an expired
  // challenge (the proof still authenticates the buyer): checked once the wallet's key is known
  if (!idem && ctx.clock.now() >= expiresAtMs) throw expired();
  /** The proof's wallet, when the proof is signed by the key registered on it. */
  const signer = (wallet: Wallet | undefined): Wallet => {
    if (!wallet) throw notFound('WALLET_NOT_FOUND', 'wallet', proof.walletId);
    if (!wallet.publicKeyPem || !verifyObject(keys.walletKey(wallet.id, wallet.publicKeyPem), proof)) {
      throw forbidden(`the proof is not signed by the key registered on wallet ${wallet.id}`, { walletId: wallet.id, reason: 'proof_signer_mismatch' });
    }
    return wallet;
  };
  // with an idempotency key the proof is checked before the transaction, since a retry may be
  // answered from the key in it (unsynced: only the key to check with; the transaction reads the
  // wallet again, and its commit cannot become durable before any commit it read from); without
  // one, against the wallet the transaction reads with its other reads
  if (idem) signer(await ctx.store.read((r) => r.wallets.get(proof.walletId), { unsynced: true }));
  const walletId = proof.walletId;
  const purchase: PurchaseInput = { challenge, amountMinor, walletId, idem, signer };

  const outcome = await ctx.store.tx(async (r): Promise<{ replayed: Replay } | { refused: AppError } | { txn: Transaction }> => {
    if (idem) {
      // before the nonce: a retry may resend the very proof the first request used
      const replayed = await checkKey(r, walletId, challenge.capabilityId, idem, ctx.clock.now());
      if (replayed !== undefined) return { replayed };
      if (ctx.clock.now() >= expiresAtMs) throw expired();
    }
    // what the checks below read, asked for at once, checked in order; the wallet taken too
    // (held until the commit) before any lock the policy check takes (one order for all), so a
    // budget sums the wallet's spending under it
    const [facts, , prefetched] = await Promise.all([
      r.purchaseFacts.read(factsQuery(purchase)),
      r.ledger.take(walletId),
      deps.policy.prefetch?.(r, walletId),
    ]);
    const { w, capability: cap } = checkPurchase(purchase, facts);
    const now = ctx.clock.now();
    // made before the policy check: an approval the purchase uses names its transaction
    const transactionId = ctx.ids.next('transaction');
    const refused = await policyRefusal(deps, r, purchase, w, cap, now, transactionId, prefetched);
    if (refused) return { refused };
    checkCurrency(purchase, w);
    const txn = await insertPurchase(deps, r, purchase, w, cap, transactionId, now);
    await holdFor(deps, r, txn, now);
    return { txn };
  });
  if ('refused' in outcome) throw outcome.refused;
  if ('replayed' in outcome) return outcome.replayed;
  const { txn } = outcome;
  return {
    transactionId: txn.id,
    status: 'authorized',
    walletId: txn.walletId,
    capabilityId: txn.capabilityId,
    amountMinor: txn.amountMinor.toString(),
    currency: txn.currency,
    expiresAt: iso(txn.expiresAt),
  };
}

/** What the authorization checks and writes, from the proof. */
interface PurchaseInput {
  challenge: ReturnType<typeof parsePaymentProof>['proof']['challenge'];
  amountMinor: bigint;
  walletId: string;
  idem: IdempotencyInput | undefined;
  /** the proof's wallet, when the proof is signed by the key registered on it */
  signer: (wallet: Wallet | undefined) => Wallet;
}

/** What the checks read: the nonce's use, the buyer's wallet, the breaker, the capability and the seller. */
function factsQuery(p: PurchaseInput) {
  return { nonce: p.challenge.nonce, walletId: p.walletId, capabilityId: p.challenge.capabilityId, providerId: p.challenge.providerId };
}

/** The checks of what the authorization read, in docs/protocol.md's order: the buyer's wallet and the capability paid for. */
function checkPurchase(p: PurchaseInput, got: PurchaseFacts): { w: Wallet; capability: Capability } {
  const { challenge, walletId } = p;
  // with an idempotency key the proof was checked before, against the wallet then read
  const w = p.idem ? got.wallet : p.signer(got.wallet);
  if (!w) throw notFound('WALLET_NOT_FOUND', 'wallet', walletId);
  if (got.nonceUsed) throw replay(challenge.nonce);
  if (w.frozen || w.status !== 'active') {
    throw new AppError('WALLET_FROZEN', `wallet ${w.id} is ${w.frozen ? 'frozen' : w.status}; outgoing payments are blocked until it is unfrozen`, { walletId: w.id });
  }
  if (got.paused) {
    throw new AppError('WALLET_PROVIDER_PAUSED', `provider ${challenge.providerId} is paused for wallet ${w.id} after repeated failures; wait, or resume it with POST /v1/wallets/${w.id}/resume-provider`, {
      walletId: w.id,
      providerId: challenge.providerId,
    });
  }
  if (!got.capability) throw notFound('CAPABILITY_NOT_FOUND', 'capability', challenge.capabilityId);
  // a quote stays valid for minutes; a seller suspended (or unverified) meanwhile is not paid on it
  const seller = got.seller;
  if (!seller || !seller.verified || seller.status !== 'active') {
    throw forbidden(`provider ${challenge.providerId} is ${seller?.verified ? seller.status : 'not verified'} and cannot be paid; nothing was charged`, {
      providerId: challenge.providerId, status: seller?.status, verified: seller?.verified ?? false,
    });
  }
  return { w, capability: got.capability };
}

/** The policy check's refusal (POLICY_DENIED or APPROVAL_REQUIRED), to commit what the policy wrote (an approval request) and nothing else. */
async function policyRefusal(
  deps: PaymentDeps, r: Repos, p: PurchaseInput, w: Wallet, capability: Capability, now: number, transactionId: string, prefetched: unknown,
): Promise<AppError | undefined> {
  try {
    await deps.policy.check(r, {
      workspaceId: w.tenantId, walletId: w.id, wallet: w, capability, providerId: p.challenge.providerId, amountMinor: p.amountMinor, currency: p.challenge.currency, now,
    }, transactionId, prefetched);
    return undefined;
  } catch (e) {
    if (isAppError(e) && (e.code === 'POLICY_DENIED' || e.code === 'APPROVAL_REQUIRED')) return e;
    throw e;
  }
}

function checkCurrency(p: PurchaseInput, w: Wallet): void {
  if (w.currency !== p.challenge.currency) {
    throw validationError('payment.walletId', `wallet ${w.id} holds ${w.currency} but the challenge is priced in ${p.challenge.currency}`);
  }
}

/** Writes the authorized transaction (and the idempotency key's row); a reused nonce is a replay. */
async function insertPurchase(deps: PaymentDeps, r: Repos, p: PurchaseInput, w: Wallet, cap: Capability, transactionId: string, now: number): Promise<Transaction> {
  const { challenge, idem } = p;
  const txn: Transaction = {
    id: transactionId,
    nonce: challenge.nonce,
    capabilityId: challenge.capabilityId,
    providerId: challenge.providerId,
    walletId: w.id,
    workspaceId: w.tenantId,
    amountMinor: p.amountMinor,
    feeMinor: null,
    chargedMinor: null,
    // a metered capability: its unit price as authorized now, what complete charges each unit at (the hold stays the maximum)
    metering: cap.metering ? { unit: cap.metering.unit, unitPriceMinor: cap.metering.unitPriceMinor } : null,
    currency: challenge.currency,
    status: 'authorized',
    failureReason: null,
    authorizedAt: now,
    expiresAt: now + deps.settings.releaseUnsettledAfterMs,
    resolvedAt: null,
  };
  try {
    await r.transactions.insert(txn);
  } catch (e) {
    // a database shared by several gateways: the unique nonce index decides (a store that does not
    // wait for the insert runs the refused transaction again, and its nonce read answers)
    if (isUniqueViolation(e)) throw replay(challenge.nonce);
    throw e;
  }
  if (idem) {
    try {
      await r.paymentIdempotency.insert({
        walletId: w.id, capabilityId: txn.capabilityId, key: idem.idempotencyKey, requestHash: idem.requestHash, transactionId: txn.id,
        state: 'in_progress', responseStatus: null, responseContentType: null, responseBody: null, createdAt: now, expiresAt: now + IDEMPOTENCY_WINDOW_MS,
      });
    } catch (e) {
      // a concurrent first use of the key committed first (a store that retries the whole
      // transaction on it gets here no more: the retry sees the row and answers from checkKey)
      if (isUniqueViolation(e)) throw inProgress(idem.idempotencyKey);
      throw e;
    }
  }
  return txn;
}

/**
 * The purchase's hold on the buyer's wallet, placed by the store. When the wallet cannot cover it,
 * its holds past their in-flight time (refunds the sweeper has not made yet) are expired now and
 * the hold asked for again, so an expired hold never refuses a purchase; a second refusal is
 * INSUFFICIENT_FUNDS, and the purchase goes with the database transaction.
 */
async function holdFor(deps: PaymentDeps, r: Repos, txn: Transaction, now: number): Promise<void> {
  await placeHold(deps, r, {
    walletId: txn.walletId, type: 'hold', amountMinor: 0n, holdMinor: txn.amountMinor, currency: txn.currency,
    transactionId: txn.id, reference: txn.capabilityId, memo: `hold for a call of ${txn.capabilityId}`,
  }, now);
}

/** A hold placed as a purchase's (and a session's cap) is: a refusal expires the wallet's overdue holds once and asks again, then is INSUFFICIENT_FUNDS. */
export async function placeHold(deps: PaymentDeps, r: Repos, hold: Movement, now: number): Promise<void> {
  const amount = hold.holdMinor ?? 0n;
  try {
    await place(r, deps.ctx, hold);
    return;
  } catch (e) {
    if (!(e instanceof MovementRefused)) throw e;
    if ((await expireOverdueOf(r, deps, hold.walletId, now)) === 0) throw insufficientFunds(e, amount);
  }
  try {
    await place(r, deps.ctx, hold);
  } catch (e) {
    if (e instanceof MovementRefused) throw insufficientFunds(e, amount);
    throw e;
  }
}
