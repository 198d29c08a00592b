/**
 * Opening a payment session (docs/protocol.md § Payment sessions): the seller forwards the
 * buyer's open request, signed by the wallet's registered key. The checks of authorize, in its
 * order, with the cap as the amount: the buyer's policies decide on the cap (a budget counts it,
 * an approval rule can hold the open for a person), the cap is held on the buyer's wallet by the
 * same placement rule as a purchase's hold, and the platform signs the grant. One database
 * transaction: the session, its hold, and whatever the policy wrote.
 */
import { AppError, forbidden, isAppError, notFound, validationError } from '../../../core/errors.js';
import { assertStrongPublicKey, InvalidPublicKeyError, verifyObject } from '../../../core/ed25519.js';
import { iso } from '../../../core/clock.js';
import { isUniqueViolation } from '../../../store/errors.js';
import type { Repos } from '../../../store/store.js';
import type { Session } from '../../../store/repos/sessions.js';
import type { Wallet } from '../../../store/repos/wallets.js';
import type { Capability } from '../../../store/repos/market.js';
import type { Principal } from '../../tenancy/api-keys.js';
import { requireProvider, type PaymentDeps } from '../deps.js';
import { placeHold } from '../authorize.js';
import type { VerificationKeys } from '../verification-keys.js';
import { CLAIM_WINDOW_MS, sessionView } from './view.js';
import { recordSessionEvent } from './events.js';
import { MAX_SESSION_MS, type OpenSessionBody, type OpenedSession, type SessionGrant, type UnsignedSessionGrant } from 'agentpay-sdk/contract';

export type OpenSessionInput = Pick<OpenSessionBody, 'open' | 'sellerPublicKey'>;

function parseTime(value: string, field: string): number {
  const ms = Date.parse(value);
  if (!Number.isFinite(ms) || !/^\d{4}-\d{2}-\d{2}T/.test(value)) throw validationError(field, 'is not an ISO 8601 time');
  return ms;
}

function strongKey(pem: string, field: string): void {
  try {
    assertStrongPublicKey(pem);
  } catch (e) {
    if (e instanceof InvalidPublicKeyError) throw validationError(field, e.message);
    throw e;
  }
}

export async function openSession(deps: PaymentDeps, keys: VerificationKeys, p: Principal, input: OpenSessionInput): Promise<OpenedSession> {
  requireProvider(p);
  const { ctx } = deps;
  const { open } = input;
  if (open.providerId !== p.tenantId) throw forbidden('the open request names another seller', { providerId: open.providerId });
  const cap = BigInt(open.capMinor);
  if (cap <= 0n) throw validationError('open.capMinor', 'must be more than 0');
  const expiresAt = parseTime(open.expiresAt, 'open.expiresAt');
  const openedAt = ctx.clock.now();
  if (expiresAt <= openedAt) throw validationError('open.expiresAt', `is in the past (${open.expiresAt}); sign a new open request`);
  if (expiresAt > openedAt + MAX_SESSION_MS) throw validationError('open.expiresAt', 'is more than 30 days away; a session lasts at most 30 days');
  parseTime(open.signedAt, 'open.signedAt');
  strongKey(open.sessionPublicKey, 'open.sessionPublicKey');
  strongKey(input.sellerPublicKey, 'sellerPublicKey');

  // the signature first, against the wallet's key as read now (the transaction reads the wallet again)
  const signed = await ctx.store.read((r) => r.wallets.get(open.walletId), { unsynced: true });
  if (!signed) throw notFound('WALLET_NOT_FOUND', 'wallet', open.walletId);
  if (!signed.publicKeyPem || !verifyObject(keys.walletKey(signed.id, signed.publicKeyPem), open)) {
    throw forbidden(`the open request is not signed by the key registered on wallet ${signed.id}`, { walletId: signed.id, reason: 'open_signer_mismatch' });
  }

  const outcome = await ctx.store.tx(async (r): Promise<{ refused: AppError } | { session: Session }> => {
    const [w, capability, seller, breaker, , prefetched] = await Promise.all([
      r.wallets.get(open.walletId),
      open.capabilityId === null ? undefined : r.capabilities.get(open.capabilityId),
      r.tenants.get(open.providerId),
      r.breakers.get(open.walletId, open.providerId),
      // the wallet's lock before any the policy check takes (authorize's order)
      r.ledger.take(open.walletId),
      deps.policy.prefetch?.(r, open.walletId),
    ]);
    const wallet = checkOpen(open, w, capability, seller, breaker?.paused === true);
    const sessionId = ctx.ids.next('session');
    const now = ctx.clock.now();
    const refused = await policyRefusal(deps, r, wallet, capability, open.providerId, cap, open.currency, now, sessionId, prefetched);
    if (refused) return { refused };
    if (wallet.currency !== open.currency) throw validationError('open.currency', `wallet ${wallet.id} holds ${wallet.currency}, not ${open.currency}`);
    if (capability && capability.currency !== open.currency) throw validationError('open.currency', `capability ${capability.id} is priced in ${capability.currency}, not ${open.currency}`);
    if (!seller!.settlementWalletId) throw new AppError('INTERNAL', `provider ${seller!.id} has no settlement wallet`);
    const session: Session = {
      id: sessionId, walletId: wallet.id, workspaceId: wallet.tenantId, providerId: open.providerId, capabilityId: open.capabilityId,
      payTo: seller!.settlementWalletId, capMinor: cap, claimedMinor: 0n, feeMinor: 0n, currency: open.currency, lastSequence: 0,
      sessionPublicKey: open.sessionPublicKey, sellerPublicKey: input.sellerPublicKey, openNonce: open.nonce, status: 'open',
      expiresAt, claimWindowEndsAt: expiresAt + CLAIM_WINDOW_MS, createdAt: now, updatedAt: now, closedAt: null,
    };
    try {
      await r.sessions.insert(session);
    } catch (e) {
      if (isUniqueViolation(e)) throw replay(open.nonce);
      throw e;
    }
    await holdCap(deps, r, session, now);
    await recordSessionEvent(r, ctx, 'session.opened', session);
    return { session };
  });
  if ('refused' in outcome) throw outcome.refused;
  const { session } = outcome;
  return { session: sessionView(session), grant: grantOf(deps, session) };
}

function replay(nonce: string): AppError {
  return new AppError('REPLAY_DETECTED', 'this open request was already used and opened its session; sign a new one (another nonce) for another session', { nonce });
}

/** The checks of what the open read, in authorize's order. */
function checkOpen(
  open: OpenSessionInput['open'], w: Wallet | undefined, capability: Capability | undefined, seller: Awaited<ReturnType<Repos['tenants']['get']>>, paused: boolean,
): Wallet {
  if (!w) throw notFound('WALLET_NOT_FOUND', 'wallet', open.walletId);
  if (!w.publicKeyPem) throw forbidden(`wallet ${w.id} has no registered key and cannot pay`, { walletId: w.id, reason: 'open_signer_mismatch' });
  if (w.frozen || w.status !== 'active') {
    throw new AppError('WALLET_FROZEN', `wallet ${w.id} is ${w.frozen ? 'frozen' : w.status}; outgoing payments are blocked until it is unfrozen`, { walletId: w.id });
  }
  if (paused) {
    throw new AppError('WALLET_PROVIDER_PAUSED', `provider ${open.providerId} is paused for wallet ${w.id} after repeated failures; wait, or resume it with POST /v1/wallets/${w.id}/resume-provider`, {
      walletId: w.id, providerId: open.providerId,
    });
  }
  if (open.capabilityId !== null) {
    if (!capability) throw notFound('CAPABILITY_NOT_FOUND', 'capability', open.capabilityId);
    if (capability.providerId !== open.providerId) throw forbidden(`capability ${capability.id} belongs to another provider`, { capabilityId: capability.id });
    if (capability.status !== 'active') {
      throw new AppError('CONFLICT', `capability ${capability.id} is ${capability.status} and cannot be sold`, { capabilityId: capability.id, status: capability.status });
    }
  }
  if (!seller || !seller.verified || seller.status !== 'active') {
    throw forbidden(`provider ${open.providerId} is ${seller?.verified ? seller.status : 'not verified'} and cannot be paid; nothing was held`, {
      providerId: open.providerId, status: seller?.status, verified: seller?.verified ?? false,
    });
  }
  return w;
}

/**
 * The buyer's policies on the cap, as on a purchase of that amount. A session for all of a
 * seller's capabilities has no one capability for the policies to judge: it opens only where
 * the workspace's policies allow everything, otherwise POLICY_DENIED (open one per capability).
 */
export async function policyRefusal(
  deps: PaymentDeps, r: Repos, w: Wallet, capability: Capability | undefined, providerId: string, amountMinor: bigint, currency: string, now: number, sessionId: string, prefetched: unknown,
): Promise<AppError | undefined> {
  if (!capability) {
    if (deps.policy.allowsAll?.(prefetched) === true) return undefined;
    return new AppError('POLICY_DENIED', "the wallet's policies decide per capability: open a session for one capability (capabilityId) instead of all of the seller's", {
      walletId: w.id, providerId, reason: 'session_needs_capability',
    });
  }
  try {
    await deps.policy.check(r, { workspaceId: w.tenantId, walletId: w.id, wallet: w, capability, providerId, amountMinor, currency, now }, sessionId, prefetched);
    return undefined;
  } catch (e) {
    if (isAppError(e) && (e.code === 'POLICY_DENIED' || e.code === 'APPROVAL_REQUIRED')) return e;
    throw e;
  }
}

/** The hold of `s.capMinor` (the cap, or a top-up's increase), placed as a purchase's is (authorize.ts holdFor): a refusal expires overdue holds once, then is INSUFFICIENT_FUNDS. */
export async function holdCap(deps: PaymentDeps, r: Repos, s: Session, now: number): Promise<void> {
  await placeHold(deps, r, {
    walletId: s.walletId, type: 'hold', amountMinor: 0n, holdMinor: s.capMinor, currency: s.currency,
    transactionId: s.id, reference: s.capabilityId ?? s.providerId, memo: `hold of ${s.capMinor} for session ${s.id}`,
  }, now);
}

/** The platform-signed grant of a session, as opened. */
export function grantOf(deps: Pick<PaymentDeps, 'signingKeys'>, s: Session): SessionGrant {
  return deps.signingKeys.sign({
    version: 1,
    sessionId: s.id,
    walletId: s.walletId,
    providerId: s.providerId,
    capabilityId: s.capabilityId,
    payTo: s.payTo,
    capMinor: s.capMinor.toString(),
    currency: s.currency,
    expiresAt: iso(s.expiresAt),
    claimWindowEndsAt: iso(s.claimWindowEndsAt),
    sessionPublicKey: s.sessionPublicKey,
    sellerPublicKey: s.sellerPublicKey,
    issuedAt: iso(s.createdAt),
  } satisfies UnsignedSessionGrant);
}
