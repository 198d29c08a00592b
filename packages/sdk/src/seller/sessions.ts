/**
 * The seller's side of payment sessions (docs/protocol.md § Payment sessions), free of any
 * transport: it checks the platform-signed grant once, then each call's voucher by itself,
 * persists the highest accepted voucher before the handler runs, signs a per-call receipt,
 * and hands the highest voucher of each session to the claims.
 *
 *   const checker = new SessionChecker({ providerId, sellerPrivateKeyPem, platformKey, store: new MemoryVoucherStore() });
 *   await checker.acceptGrant(grant);                       // once per session
 *   const d = await checker.check(voucher, { priceMinor: '10', requestHash });
 *   if (d.kind === 'accept' || d.kind === 'retry') { serve; await checker.settle(d, { ok: true, responseHash }) }
 *   else answer 402 with d.state (the corrective 402: where the buyer resyncs from)
 *   await gateway.sessions.claim(await checker.claims());
 *
 * Concurrency: per-session ordering. A voucher is accepted when its sequence is above the
 * highest accepted, its cumulative amount is not below it, and it covers what was served so far
 * plus this call (`cumulative - spent >= price`). Vouchers of one session are checked one at a
 * time in this process. A voucher that arrives after a higher one (parallel calls overtaking
 * each other) is answered with the session's state, and the buyer signs the next one from it.
 * An equal voucher (same sequence, amount and request) is an idempotent retry: served again,
 * charged nothing more. A call that fails gives its price back to the session's credit
 * (`spent` goes down), so the next voucher need not raise the cumulative amount for it.
 *
 * Runs in Node, browsers and edge runtimes: no Node imports (the file store is ./voucher-file-store.ts).
 */
import { verifyObject, signObject, publicKeyOf, rawToPublicKeyPem, publicKeyPemToRaw } from '../signing.js';
import type { SessionGrant, SessionReceipt, SessionState, UnsignedSessionReceipt, Voucher } from '../contract/sessions.js';

/** What the seller keeps per session: the grant and the highest accepted voucher, with what was served from it. */
export interface VoucherRecord {
  grant: SessionGrant;
  /** the highest accepted voucher; null before the first */
  voucher: Voucher | null;
  /** what the calls served (or being served) cost, in minor units */
  spentMinor: string;
  /** the highest cumulative amount claimed at the gateway */
  claimedMinor: string;
  /**
   * on a shared store only: what the calls accepted and not yet settled cost, on every instance
   * (part of `spentMinor`), so that no instance claims a call another is still serving. A process
   * that dies serving leaves its calls here: they are never claimed (the seller's loss).
   */
  inFlightMinor?: string;
}

/**
 * Where the seller keeps its voucher records. `put` resolves only once the record is durable:
 * the checker serves a call only after it (a voucher lost in a crash is the seller's loss only).
 */
export interface VoucherStore {
  get(sessionId: string): Promise<VoucherRecord | undefined>;
  put(sessionId: string, record: VoucherRecord): Promise<void>;
  delete(sessionId: string): Promise<void>;
  /** every session's record, for the claims */
  all(): Promise<VoucherRecord[]>;
  /**
   * A store several seller processes use at once (Redis) says so: it must then have `replace`, and
   * the seller needs a `privateKeyPem` that every process shares (each signs receipts with the key
   * the grant names).
   */
  readonly shared?: boolean;
  /**
   * Optional (a shared store has it): sets `next` only when the stored record is still `expected`
   * (the object `get` returned; undefined: no record), atomically, and says whether it did. The
   * checker then reads again and decides again, so two processes never both accept one sequence.
   */
  replace?(sessionId: string, expected: VoucherRecord | undefined, next: VoucherRecord): Promise<boolean>;
  /**
   * Optional (a durable store on the seller's own disk has it): the seller's session receipt key
   * (PKCS#8 PEM), made at the first call and kept beside the records, so that a restarted seller
   * signs with the key that the grants of its open sessions name.
   */
  receiptKey?(): Promise<string>;
}

/** In memory: for tests and sellers that accept losing unclaimed vouchers at a restart. */
export class MemoryVoucherStore implements VoucherStore {
  private records = new Map<string, VoucherRecord>();
  async get(sessionId: string) { return this.records.get(sessionId); }
  async put(sessionId: string, record: VoucherRecord) { this.records.set(sessionId, structuredClone(record)); }
  async delete(sessionId: string) { this.records.delete(sessionId); }
  async all() { return [...this.records.values()].map((r) => structuredClone(r)); }
}

export interface SessionCheckerOptions {
  /** the seller (its provider id): a grant for another seller is refused */
  providerId: string;
  /** the seller's ed25519 private key (PKCS#8 PEM) that signs per-call session receipts; its public half goes into the open */
  sellerPrivateKeyPem: string;
  /** the platform's public key (SPKI PEM) of a signing key id, or undefined when unknown */
  platformKey: (signingKeyId: string) => Promise<string | undefined> | string | undefined;
  store: VoucherStore;
  /** clock (tests) */
  now?: () => number;
}

export type SessionRefusal = 'SESSION_NOT_FOUND' | 'SESSION_EXPIRED' | 'SESSION_CLOSED' | 'VOUCHER_INVALID' | 'VOUCHER_ABOVE_CAP' | 'VOUCHER_STALE';

export type VoucherDecision =
  /** a new voucher, persisted: serve the call, then settle it */
  | { kind: 'accept'; sessionId: string; sequence: number; chargedMinor: string; state: SessionState; requestHash?: string; walletId?: string }
  /** the voucher accepted last, again: an idempotent retry; serve it (or the kept answer) and charge nothing more */
  | { kind: 'retry'; sessionId: string; sequence: number; chargedMinor: string; state: SessionState; requestHash?: string; walletId?: string }
  /** refused: answer 402 with `state` (when known) so the buyer resyncs; `code` says why */
  | { kind: 'refuse'; code: SessionRefusal; message: string; state: SessionState | null };

export class SessionError extends Error {
  constructor(readonly code: SessionRefusal, message: string) {
    super(message);
    this.name = 'SessionError';
  }
}

const stateOf = (sessionId: string, r: VoucherRecord): SessionState => ({
  sessionId,
  sequence: r.voucher?.sequence ?? 0,
  cumulativeMinor: r.voucher?.cumulativeMinor ?? '0',
  spentMinor: r.spentMinor,
});

export class SessionChecker {
  private readonly now: () => number;
  private readonly locks = new Map<string, Promise<unknown>>();
  private sellerPublicKey: Promise<string>;

  constructor(private readonly opts: SessionCheckerOptions) {
    this.now = opts.now ?? Date.now;
    this.sellerPublicKey = publicKeyOf(opts.sellerPrivateKeyPem).then(rawToPublicKeyPem);
  }

  /** The SPKI PEM to send with the open (`sellerPublicKey`): the grant names it, and buyers check receipts with it. */
  publicKeyPem(): Promise<string> {
    return this.sellerPublicKey;
  }

  /** One call at a time per session in this process. */
  private serial<T>(sessionId: string, fn: () => Promise<T>): Promise<T> {
    const before = this.locks.get(sessionId) ?? Promise.resolve();
    const run = before.then(fn, fn);
    const tail = run.then(() => undefined, () => undefined);
    this.locks.set(sessionId, tail);
    void tail.then(() => { if (this.locks.get(sessionId) === tail) this.locks.delete(sessionId); });
    return run;
  }

  /**
   * Reads a session's record, decides, and writes what was decided (`next`; nothing when undefined).
   * On a shared store the write is a compare-and-set: when another process changed the record in
   * between, the decision is made again on what it wrote.
   */
  private async update<T>(sessionId: string, decide: (rec: VoucherRecord | undefined) => Promise<{ next?: VoucherRecord; result: T }>): Promise<T> {
    const { store } = this.opts;
    for (let attempt = 1; ; attempt++) {
      const rec = await store.get(sessionId);
      const { next, result } = await decide(rec);
      if (!next) return result;
      if (!store.replace) {
        await store.put(sessionId, next);
        return result;
      }
      if (await store.replace(sessionId, rec, next)) return result;
      if (attempt >= 1000) throw new Error(`the record of session ${sessionId} kept changing under 1000 attempts to update it`);
    }
  }

  /**
   * Checks a grant once (the platform's signature, this seller, this seller's key) and keeps it; throws
   * SessionError otherwise. A top-up's grant (same session and key, higher cap) replaces the one kept.
   */
  async acceptGrant(grant: SessionGrant): Promise<void> {
    const pem = await this.opts.platformKey(grant.signingKeyId);
    if (!pem || !(await verifyObject(pem, grant as unknown as Record<string, unknown>))) {
      throw new SessionError('VOUCHER_INVALID', `the grant of session ${grant.sessionId} is not signed by the platform key ${grant.signingKeyId}`);
    }
    if (grant.providerId !== this.opts.providerId) throw new SessionError('VOUCHER_INVALID', `the grant of session ${grant.sessionId} is for another seller (${grant.providerId})`);
    const mine = publicKeyPemToRaw(await this.sellerPublicKey);
    const named = publicKeyPemToRaw(grant.sellerPublicKey);
    if (mine.length !== named.length || mine.some((b, i) => b !== named[i])) {
      throw new SessionError('VOUCHER_INVALID', `the grant of session ${grant.sessionId} names another receipt key than this seller's`);
    }
    await this.serial(grant.sessionId, () => this.update(grant.sessionId, async (rec) => {
      if (!rec) return { next: { grant, voucher: null, spentMinor: '0', claimedMinor: '0' }, result: undefined };
      // a top-up's grant: the same session with a higher cap
      if (rec.grant.sessionPublicKey === grant.sessionPublicKey && BigInt(grant.capMinor) > BigInt(rec.grant.capMinor)) return { next: { ...rec, grant }, result: undefined };
      return { result: undefined };
    }));
  }

  /**
   * The per-call check of a voucher paying `priceMinor` for the request fingerprinted `requestHash`:
   * signature, cumulative <= cap, monotonic, not expired; the accepted voucher is persisted before
   * this resolves.
   */
  check(voucher: Voucher, call: { priceMinor: string; requestHash: string; capabilityId?: string }): Promise<VoucherDecision> {
    return this.serial(voucher.sessionId, () => this.update(voucher.sessionId, async (rec): Promise<{ next?: VoucherRecord; result: VoucherDecision }> => {
      const refuse = (code: SessionRefusal, message: string, state: SessionState | null = null) => ({ result: { kind: 'refuse', code, message, state } as VoucherDecision });
      if (!rec) return refuse('SESSION_NOT_FOUND', `no grant for session ${voucher.sessionId}: open the session (or send its grant) first`);
      const { grant } = rec;
      const state = stateOf(grant.sessionId, rec);
      if (this.now() >= Date.parse(grant.expiresAt)) return refuse('SESSION_EXPIRED', `session ${grant.sessionId} expired at ${grant.expiresAt}; open another`);
      if (call.capabilityId !== undefined && grant.capabilityId !== null && grant.capabilityId !== call.capabilityId) {
        return refuse('VOUCHER_INVALID', `session ${grant.sessionId} pays for ${grant.capabilityId}, not ${call.capabilityId}`);
      }
      if (!(await verifyObject(grant.sessionPublicKey, voucher as unknown as Record<string, unknown>))) {
        return refuse('VOUCHER_INVALID', `the voucher is not signed by the key of session ${grant.sessionId}`, state);
      }
      if (voucher.requestHash !== call.requestHash) return refuse('VOUCHER_INVALID', 'the voucher pays for another request (requestHash)', state);
      const cumulative = BigInt(voucher.cumulativeMinor);
      if (cumulative > BigInt(grant.capMinor)) return refuse('VOUCHER_ABOVE_CAP', `the voucher's cumulative ${cumulative} is above the session's cap ${grant.capMinor}`, state);
      const last = rec.voucher;
      if (last && last.sequence === voucher.sequence && last.cumulativeMinor === voucher.cumulativeMinor && last.requestHash === voucher.requestHash) {
        return { result: { kind: 'retry', sessionId: grant.sessionId, sequence: voucher.sequence, chargedMinor: '0', state, requestHash: voucher.requestHash, walletId: grant.walletId } };
      }
      const price = BigInt(call.priceMinor);
      const spent = BigInt(rec.spentMinor);
      if (voucher.sequence <= state.sequence || cumulative < BigInt(state.cumulativeMinor) || cumulative - spent < price) {
        return refuse('VOUCHER_STALE', `session ${grant.sessionId} stands at sequence ${state.sequence}, cumulative ${state.cumulativeMinor}, spent ${state.spentMinor}: sign the next voucher from there (this call costs ${price})`, state);
      }
      const next: VoucherRecord = { ...rec, voucher, spentMinor: (spent + price).toString(), ...(this.opts.store.shared ? { inFlightMinor: (BigInt(rec.inFlightMinor ?? '0') + price).toString() } : {}) };
      return { next, result: { kind: 'accept', sessionId: grant.sessionId, sequence: voucher.sequence, chargedMinor: price.toString(), state: stateOf(grant.sessionId, next), requestHash: voucher.requestHash, walletId: grant.walletId } };
    }));
  }

  /**
   * After the handler: a success answers the per-call receipt, signed by the seller's key; a
   * failure gives the call's price back to the session's credit and answers null. A metered call
   * charges what it used (`chargedMinor`, at most the price its voucher paid): the rest goes back
   * to the credit, and the receipt says what was charged.
   */
  async settle(d: Extract<VoucherDecision, { kind: 'accept' | 'retry' }>, outcome: { ok: boolean; responseHash: string; chargedMinor?: string }): Promise<SessionReceipt | null> {
    const reserved = BigInt(d.chargedMinor);
    const charged = !outcome.ok ? 0n : outcome.chargedMinor === undefined ? reserved : BigInt(outcome.chargedMinor);
    if (charged < 0n || charged > reserved) throw new SessionError('VOUCHER_ABOVE_CAP', `a call paid ${reserved} cannot charge ${charged}`);
    const shared = this.opts.store.shared === true;
    if (d.kind === 'accept' && (charged < reserved || shared)) {
      await this.serial(d.sessionId, () => this.update(d.sessionId, async (rec) => {
        if (!rec) return { result: undefined };
        const next: VoucherRecord = { ...rec, spentMinor: (BigInt(rec.spentMinor) - (reserved - charged)).toString() };
        if (shared) {
          const left = BigInt(rec.inFlightMinor ?? '0') - reserved;
          next.inFlightMinor = (left > 0n ? left : 0n).toString();
        }
        return { next, result: undefined };
      }));
    }
    if (!outcome.ok) return null;
    // the voucher that paid this call (a parallel call may have put a later one in the record since)
    let paid = d.requestHash !== undefined ? { cumulativeMinor: d.state.cumulativeMinor, requestHash: d.requestHash } : undefined;
    if (!paid) {
      const voucher = (await this.opts.store.get(d.sessionId))?.voucher;
      if (!voucher) throw new SessionError('SESSION_NOT_FOUND', `no voucher for session ${d.sessionId}`);
      paid = { cumulativeMinor: voucher.cumulativeMinor, requestHash: voucher.requestHash };
    }
    const unsigned: UnsignedSessionReceipt = {
      version: 1, type: 'session.receipt', sessionId: d.sessionId, sequence: d.sequence, cumulativeMinor: paid.cumulativeMinor,
      chargedMinor: charged.toString(), requestHash: paid.requestHash, responseHash: outcome.responseHash, timestamp: new Date(this.now()).toISOString(),
    };
    return { ...unsigned, signature: await signObject(this.opts.sellerPrivateKeyPem, unsigned) };
  }

  /** The highest voucher of every session with more to claim than was claimed: the body of POST /v1/sessions/claims. */
  async claims(): Promise<{ sessionId: string; voucher: Voucher }[]> {
    return (await this.opts.store.all())
      .filter((r) => r.voucher !== null && BigInt(r.voucher.cumulativeMinor) > BigInt(r.claimedMinor))
      .map((r) => ({ sessionId: r.grant.sessionId, voucher: r.voucher! }));
  }

  /** Records what the gateway says was claimed (a `claimed` or `unchanged` result). */
  async claimed(sessionId: string, cumulativeMinor: string): Promise<void> {
    await this.serial(sessionId, () => this.update(sessionId, async (rec) => ({
      ...(rec && BigInt(cumulativeMinor) > BigInt(rec.claimedMinor) ? { next: { ...rec, claimedMinor: cumulativeMinor } } : {}),
      result: undefined,
    })));
  }

  /** The highest accepted voucher of a session (for the close), or null. */
  async highest(sessionId: string): Promise<Voucher | null> {
    return (await this.opts.store.get(sessionId))?.voucher ?? null;
  }

  /** Forgets a closed session. */
  forget(sessionId: string): Promise<void> {
    return this.serial(sessionId, () => this.opts.store.delete(sessionId));
  }
}
