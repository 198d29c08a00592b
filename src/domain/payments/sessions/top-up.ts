/**
 * Top-up of an open payment session (docs/protocol.md § Payment sessions): the buyer signs, with
 * its wallet key, a raise of the cap from one amount to another; the seller forwards it. The
 * policies decide on the increase as on a purchase of it, the increase is held on the buyer's
 * wallet, and the platform signs a new grant with the new cap. A top-up applies only while the cap
 * is its `fromCapMinor`: a replay of one applied already answers the session as it is, and changes
 * nothing.
 */
import { AppError, forbidden, validationError } from '../../../core/errors.js';
import { verifyObject } from '../../../core/ed25519.js';
import type { Session } from '../../../store/repos/sessions.js';
import type { Principal } from '../../tenancy/api-keys.js';
import { requireProvider, type PaymentDeps } from '../deps.js';
import type { VerificationKeys } from '../verification-keys.js';
import { grantOf, holdCap, policyRefusal } from './open.js';
import { sessionNotFound, sessionView } from './view.js';
import type { OpenedSession, SessionTopUp } from 'agentpay-sdk/contract';

export async function topUpSession(deps: PaymentDeps, keys: VerificationKeys, p: Principal, sessionId: string, topUp: SessionTopUp): Promise<OpenedSession> {
  requireProvider(p);
  const { ctx } = deps;
  // another seller's session is not found before anything of the body is looked at
  const [known, signer] = await ctx.store.read((r) => Promise.all([r.sessions.get(sessionId), r.wallets.get(topUp.walletId)]), { unsynced: true, snapshot: false });
  if (!known || known.providerId !== p.tenantId) throw sessionNotFound(sessionId);
  if (topUp.sessionId !== sessionId) throw validationError('topUp.sessionId', `is ${topUp.sessionId}, not the session ${sessionId} of the path`);
  const from = BigInt(topUp.fromCapMinor);
  const to = BigInt(topUp.toCapMinor);
  if (to <= from) throw validationError('topUp.toCapMinor', 'must be more than fromCapMinor');
  if (!signer?.publicKeyPem || !verifyObject(keys.walletKey(signer.id, signer.publicKeyPem), topUp)) {
    throw forbidden(`the top-up is not signed by the key registered on wallet ${topUp.walletId}`, { walletId: topUp.walletId, reason: 'topup_signer_mismatch' });
  }
  const outcome = await ctx.store.tx(async (r): Promise<{ refused: AppError } | { session: Session }> => {
    const s = await r.sessions.getForUpdate(sessionId);
    if (!s || s.providerId !== p.tenantId) throw sessionNotFound(sessionId);
    if (s.walletId !== topUp.walletId) throw forbidden(`session ${s.id} is paid by another wallet`, { sessionId: s.id, walletId: topUp.walletId });
    if (s.capMinor === to) return { session: s }; // applied already
    if (s.status !== 'open') throw new AppError('SESSION_CLOSED', `session ${s.id} is ${s.status}; open another`, { sessionId: s.id, status: s.status });
    const now = ctx.clock.now();
    if (now >= s.expiresAt) throw new AppError('SESSION_EXPIRED', `session ${s.id} expired at ${new Date(s.expiresAt).toISOString()}; open another`, { sessionId: s.id });
    if (s.capMinor !== from) {
      throw new AppError('CONFLICT', `session ${s.id}'s cap is ${s.capMinor}, not ${from}: sign a top-up from the cap it has`, { sessionId: s.id, capMinor: s.capMinor.toString() });
    }
    const [w, capability, , prefetched] = await Promise.all([
      r.wallets.get(s.walletId),
      s.capabilityId === null ? undefined : r.capabilities.get(s.capabilityId),
      r.ledger.take(s.walletId),
      deps.policy.prefetch?.(r, s.walletId),
    ]);
    if (!w || w.frozen || w.status !== 'active') {
      throw new AppError('WALLET_FROZEN', `wallet ${s.walletId} is frozen or closed; outgoing payments are blocked until it is unfrozen`, { walletId: s.walletId });
    }
    const refused = await policyRefusal(deps, r, w, capability, s.providerId, to - from, s.currency, now, s.id, prefetched);
    if (refused) return { refused };
    const patch = { capMinor: to, updatedAt: now };
    if (!(await r.sessions.advance(s.id, s.claimedMinor, patch))) throw new AppError('CONFLICT', `session ${s.id} changed at the same time; send the top-up again`, { sessionId: s.id });
    const raised = { ...s, ...patch };
    await holdCap(deps, r, { ...raised, capMinor: to - from }, now);
    return { session: raised };
  });
  if ('refused' in outcome) throw outcome.refused;
  return { session: sessionView(outcome.session), grant: grantOf(deps, outcome.session) };
}
