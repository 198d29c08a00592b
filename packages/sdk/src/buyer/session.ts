/**
 * The buyer's side of payment sessions (docs/protocol.md § Payment sessions), free of any
 * transport: sign an open request with the wallet's key (the seller forwards it to the gateway),
 * check the platform-signed grant, then sign one cumulative voucher per call with the session's
 * own ephemeral key, resync from a seller's corrective 402, check the seller's per-call receipts,
 * and close.
 *
 *   const { open, session } = await openRequest({ walletId, privateKeyPem, providerId, capabilityId, capMinor: '1000', currency: 'USD', expiresAt });
 *   // the seller: const { grant } = await gateway.sessions.open({ open, sellerPublicKey })
 *   const s = await session.start(grant, platformKeyPem);
 *   const voucher = await s.voucher('10', requestHash);   // one per call
 *   const last = s.close();                                // the highest voucher, for the seller's close
 *
 * Runs in Node, browsers and edge runtimes: no Node imports.
 */
import { generateKeyPair, signObject, verifyObject } from '../signing.js';
import type {
  SessionCloseRequest, SessionGrant, SessionOpen, SessionReceipt, SessionState, SessionTopUp, UnsignedSessionCloseRequest, UnsignedSessionOpen, UnsignedSessionTopUp, UnsignedVoucher, Voucher,
} from '../contract/sessions.js';
import { AgentpayError } from '../errors.js';

export interface OpenRequestOptions {
  walletId: string;
  /** the agent's key registered on the wallet (PKCS#8 PEM) */
  privateKeyPem?: string;
  /** or what signs with it: base64 ed25519 of the canonical object */
  sign?: (unsigned: UnsignedSessionOpen) => Promise<string>;
  providerId: string;
  /** one capability, or null for all of the seller's */
  capabilityId: string | null;
  capMinor: string;
  currency: string;
  /** ISO 8601 time, at most 30 days away */
  expiresAt: string;
  now?: () => number;
}

function randomNonce(): string {
  const bytes = new Uint8Array(24);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** A signed open request, and the session waiting for its grant (it holds the fresh session key). */
export async function openRequest(o: OpenRequestOptions): Promise<{ open: SessionOpen; session: PendingSession }> {
  const key = await generateKeyPair();
  const now = o.now ?? Date.now;
  const unsigned: UnsignedSessionOpen = {
    version: 1, type: 'session.open', walletId: o.walletId, providerId: o.providerId, capabilityId: o.capabilityId,
    capMinor: o.capMinor, currency: o.currency, expiresAt: o.expiresAt, sessionPublicKey: key.publicKeyPem, nonce: randomNonce(),
    signedAt: new Date(now()).toISOString(),
  };
  if (!o.sign && !o.privateKeyPem) throw new AgentpayError('VALIDATION_FAILED', 'openRequest needs privateKeyPem (the wallet\'s agent key) or sign', { details: { field: 'privateKeyPem' } });
  const open: SessionOpen = { ...unsigned, signature: o.sign ? await o.sign(unsigned) : await signObject(o.privateKeyPem!, unsigned) };
  return { open, session: new PendingSession(open, key.privateKeyPem, now) };
}

export class PendingSession {
  constructor(private readonly open: SessionOpen, private readonly sessionPrivateKeyPem: string, private readonly now: () => number) {}

  /** Checks the grant against the platform key and the open request; the session to pay with. */
  async start(grant: SessionGrant, platformKeyPem: string): Promise<BuyerSession> {
    if (!(await verifyObject(platformKeyPem, grant as unknown as Record<string, unknown>))) {
      throw new AgentpayError('INVALID_GRANT', `the grant of session ${grant.sessionId} is not signed by the platform key ${grant.signingKeyId}`);
    }
    const o = this.open;
    if (grant.walletId !== o.walletId || grant.providerId !== o.providerId || grant.capabilityId !== o.capabilityId || grant.capMinor !== o.capMinor
      || grant.currency !== o.currency || grant.sessionPublicKey !== o.sessionPublicKey || Date.parse(grant.expiresAt) !== Date.parse(o.expiresAt)) {
      throw new AgentpayError('INVALID_GRANT', `the grant of session ${grant.sessionId} does not match the open request signed`);
    }
    return new BuyerSession(grant, this.sessionPrivateKeyPem, this.now);
  }
}

export class BuyerSession {
  private sequence = 0;
  /** what the calls this side paid for add up to */
  private cumulative = 0n;
  /** the seller's accepted cumulative amount after a resync: a voucher never goes below it */
  private floor = 0n;
  private closed = false;
  private last: Voucher | null = null;
  /** what each voucher in flight paid for its call, by sequence (a metered call may charge less) */
  private paid = new Map<number, bigint>();

  constructor(public grant: SessionGrant, private readonly sessionPrivateKeyPem: string, private readonly now: () => number) {}

  get sessionId(): string {
    return this.grant.sessionId;
  }

  /**
   * A top-up raising the cap to `toCapMinor`, signed with the wallet's key (its PKCS#8 PEM, or what
   * signs with it; the seller forwards it to POST /v1/sessions/:id/top-up); take the new grant with `raised`.
   */
  async topUpRequest(wallet: string | ((unsigned: UnsignedSessionTopUp) => Promise<string>), toCapMinor: string | bigint): Promise<SessionTopUp> {
    const unsigned: UnsignedSessionTopUp = {
      version: 1, type: 'session.topup', sessionId: this.sessionId, walletId: this.grant.walletId, fromCapMinor: this.grant.capMinor,
      toCapMinor: toCapMinor.toString(), signedAt: new Date(this.now()).toISOString(),
    };
    return { ...unsigned, signature: typeof wallet === 'string' ? await signObject(wallet, unsigned) : await wallet(unsigned) };
  }

  /** The grant of a top-up: the same session, key and seller with a higher cap, signed by the platform; refused otherwise. */
  async raised(grant: SessionGrant, platformKeyPem: string): Promise<void> {
    const g = this.grant;
    if (!(await verifyObject(platformKeyPem, grant as unknown as Record<string, unknown>)) || grant.sessionId !== g.sessionId || grant.sessionPublicKey !== g.sessionPublicKey
      || grant.walletId !== g.walletId || grant.providerId !== g.providerId || grant.sellerPublicKey !== g.sellerPublicKey || BigInt(grant.capMinor) <= BigInt(g.capMinor)) {
      throw new AgentpayError('INVALID_GRANT', `not a platform-signed raise of session ${g.sessionId}'s cap`);
    }
    this.grant = grant;
  }

  /** What is left of the cap for further calls. */
  get remainingMinor(): bigint {
    return BigInt(this.grant.capMinor) - (this.cumulative > this.floor ? this.cumulative : this.floor);
  }

  /**
   * The voucher of the next call, paying `priceMinor` more for the request fingerprinted
   * `requestHash`. Refused (nothing signed) when the session is closed or expired or the cap would
   * be passed. Signed in order: concurrent calls get increasing sequences.
   */
  async voucher(priceMinor: string | bigint, requestHash: string): Promise<Voucher> {
    if (this.closed) throw new AgentpayError('SESSION_CLOSED', `session ${this.sessionId} is closed on this side; open another`);
    if (this.now() >= Date.parse(this.grant.expiresAt)) throw new AgentpayError('SESSION_EXPIRED', `session ${this.sessionId} expired at ${this.grant.expiresAt}; open another`);
    const due = this.cumulative + BigInt(priceMinor);
    const cumulative = due > this.floor ? due : this.floor;
    if (cumulative > BigInt(this.grant.capMinor)) {
      throw new AgentpayError('VOUCHER_ABOVE_CAP', `session ${this.sessionId} has ${this.remainingMinor} left of its cap and the call costs ${priceMinor}; open another session`);
    }
    this.sequence += 1;
    this.cumulative = due;
    this.floor = cumulative;
    this.paid.set(this.sequence, BigInt(priceMinor));
    const unsigned: UnsignedVoucher = { sessionId: this.sessionId, cumulativeMinor: cumulative.toString(), sequence: this.sequence, requestHash };
    const v: Voucher = { ...unsigned, signature: await signObject(this.sessionPrivateKeyPem, unsigned) };
    if (!this.last || v.sequence > this.last.sequence) this.last = v;
    return v;
  }

  /**
   * A seller's corrective 402 said where the session stands: the next voucher goes on from there,
   * covering what was served (`spentMinor`) plus the call. A state that claims more than this
   * side signed is refused.
   */
  resync(state: SessionState): void {
    if (state.sessionId !== this.sessionId) throw new AgentpayError('INVALID_SESSION_STATE', `the state is of session ${state.sessionId}, not ${this.sessionId}`);
    const cumulative = BigInt(state.cumulativeMinor);
    const spent = BigInt(state.spentMinor);
    if (cumulative > this.cumulative || spent > this.cumulative) {
      throw new AgentpayError('INVALID_SESSION_STATE', `the seller says session ${this.sessionId} stands at ${state.cumulativeMinor} (spent ${state.spentMinor}), above the ${this.cumulative} signed; not resynced`);
    }
    this.sequence = Math.max(this.sequence, state.sequence);
    // the next voucher covers what was served plus its call, and never goes below what the seller accepted
    this.cumulative = spent;
    this.floor = cumulative;
  }

  /** A per-call receipt, checked against the seller's key that the grant names, the session and the response received. */
  async verifyReceipt(receipt: SessionReceipt, responseHash: string): Promise<boolean> {
    return receipt.sessionId === this.sessionId && receipt.responseHash === responseHash
      && verifyObject(this.grant.sellerPublicKey, receipt as unknown as Record<string, unknown>);
  }

  /**
   * A verified receipt of a call: a metered call that charged less than its voucher paid leaves
   * the rest as credit, which the next voucher uses (it raises the cumulative amount only by what
   * the credit does not cover).
   */
  settled(receipt: SessionReceipt): void {
    const paid = this.paid.get(receipt.sequence);
    if (paid === undefined || receipt.sessionId !== this.sessionId) return;
    this.paid.delete(receipt.sequence);
    const charged = BigInt(receipt.chargedMinor);
    if (charged < paid) this.cumulative -= paid - charged;
  }

  /**
   * The voucher of the next call at a cumulative amount the caller chose (a pool that keeps its own
   * account of parallel calls, ./session-pool.ts): never below one signed before, never above the
   * cap (VOUCHER_ABOVE_CAP, nothing signed). Signed in order: concurrent calls get increasing sequences.
   */
  async voucherAt(cumulativeMinor: bigint, requestHash: string): Promise<Voucher> {
    if (this.closed) throw new AgentpayError('SESSION_CLOSED', `session ${this.sessionId} is closed on this side; open another`);
    if (this.now() >= Date.parse(this.grant.expiresAt)) throw new AgentpayError('SESSION_EXPIRED', `session ${this.sessionId} expired at ${this.grant.expiresAt}; open another`);
    if (cumulativeMinor > BigInt(this.grant.capMinor)) throw new AgentpayError('VOUCHER_ABOVE_CAP', `session ${this.sessionId}'s cap ${this.grant.capMinor} is below ${cumulativeMinor}; open another session`);
    const floor = this.last ? BigInt(this.last.cumulativeMinor) : 0n;
    const cumulative = cumulativeMinor > floor ? cumulativeMinor : floor;
    this.sequence += 1;
    const unsigned: UnsignedVoucher = { sessionId: this.sessionId, cumulativeMinor: cumulative.toString(), sequence: this.sequence, requestHash };
    const v: Voucher = { ...unsigned, signature: await signObject(this.sessionPrivateKeyPem, unsigned) };
    if (!this.last || v.sequence > this.last.sequence) this.last = v;
    return v;
  }

  /** The buyer's close, signed by the session key: the seller claims what it served and closes the session at the gateway. */
  async closeRequest(): Promise<SessionCloseRequest> {
    this.closed = true;
    const unsigned: UnsignedSessionCloseRequest = { version: 1, type: 'session.close', sessionId: this.sessionId, signedAt: new Date(this.now()).toISOString() };
    return { ...unsigned, signature: await signObject(this.sessionPrivateKeyPem, unsigned) };
  }

  /** No more vouchers from this side; the highest one signed, for the seller's close (null: none). */
  close(): Voucher | null {
    this.closed = true;
    return this.last;
  }
}
