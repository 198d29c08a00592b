/**
 * Payment sessions inside the seller middleware (docs/protocol.md § Sessions on the wire): what
 * core.ts calls when a seller was given `sessions: { store }`. It opens a session from the
 * buyer's signed open (the one gateway trip), checks each call's voucher by itself with the
 * SessionChecker (per-session ordering, the highest voucher persisted before the handler runs),
 * signs the per-call receipt, closes a session the buyer asks to close, and claims what the calls
 * served in batches: after `claimEvery` accepted vouchers, every `claimIntervalMs`, and on close.
 *
 * A claim asks for what was served (`spent` less the calls still running), at most the highest
 * voucher's cumulative: a voucher pays ahead for its call, and a call that failed (or is still
 * running) is not claimed. No Node imports.
 */
import type { AgentpayClient } from '../client/index.js';
import { AgentpayError } from '../errors.js';
import { generateKeyPair, verifyObject } from '../signing.js';
import type { Session, SessionCloseRequest, SessionGrant, SessionOpen, SessionReceipt, SessionTopUp, Voucher } from '../contract/sessions.js';
import type { Metering } from '../contract/resources.js';
import { MemoryVoucherStore, SessionChecker, type SessionCheckerOptions, type VoucherDecision, type VoucherStore } from './sessions.js';

export interface SellerSessionOptions {
  /** where accepted vouchers are kept (durably before each call is served); default: in memory (lost at a restart: the seller's loss) */
  store?: VoucherStore;
  /**
   * the ed25519 key (PKCS#8 PEM) that signs per-call session receipts. Default: the store's own
   * (the file store keeps one in its directory, so receipts of sessions opened before a restart
   * still verify against the key their grant names), else a fresh one per process (memory).
   * Required with a shared store (Redis): every instance signs with the same key, and a private
   * key is never put in Redis.
   */
  privateKeyPem?: string;
  /** claim once this many vouchers were accepted since the last claim (default 100) */
  claimEvery?: number;
  /** and on this timer, ms (default 30 000; 0: no timer) */
  claimIntervalMs?: number;
  /** clock (tests) */
  now?: () => number;
}

export const DEFAULT_CLAIM_EVERY = 100;
export const DEFAULT_CLAIM_INTERVAL_MS = 30_000;
/** how long the price of a capability read from a challenge is used before it is read again (in the background) */
const PRICE_TTL_MS = 60_000;

/** A call paid with a voucher, between the check and the settlement. */
export type SessionCall = Extract<VoucherDecision, { kind: 'accept' | 'retry' }>;

interface InFlight {
  amount: bigint;
  count: number;
  idle: Array<() => void>;
}

export class SellerSessions {
  private checker: Promise<SessionChecker> | undefined;
  private checkerOptions: SessionCheckerOptions | undefined;
  private readonly store: VoucherStore;
  private readonly inFlight = new Map<string, InFlight>();
  private readonly prices = new Map<string, { priceMinor: string; currency: string; metering?: Metering; at: number; refreshing?: boolean }>();
  private accepted = 0;
  private claiming: Promise<void> | undefined;
  /** claim() was asked while a run was under way: run again when it ends */
  private claimAgain = false;
  private timer: ReturnType<typeof setInterval> | undefined;
  private closed = false;
  /** this seller's provider id, as the grants of its opens name it ('' before the first) */
  private providerId = '';
  private readonly now: () => number;

  constructor(
    private readonly client: AgentpayClient,
    private readonly opts: SellerSessionOptions,
    /** the price of a capability, from a fresh challenge (the gateway's) */
    private readonly quote: (capabilityId: string) => Promise<{ priceMinor: string; currency: string; providerId: string; metering?: Metering }>,
    private readonly report: (error: unknown) => void,
  ) {
    this.store = opts.store ?? new MemoryVoucherStore();
    this.now = opts.now ?? Date.now;
    if (this.store.shared && !opts.privateKeyPem) {
      throw new AgentpayError('VALIDATION_FAILED', 'agentpay seller: sessions.privateKeyPem is missing: a voucher store shared by several instances (Redis) needs the receipt key all of them sign with, and a private key is never kept in Redis; pass the same ed25519 PKCS#8 PEM to every instance (from your secret store)', { details: { field: 'sessions.privateKeyPem' } });
    }
  }

  private checkerOf(): Promise<SessionChecker> {
    this.checker ??= (async () => {
      const sellerPrivateKeyPem = this.opts.privateKeyPem ?? (this.store.receiptKey ? await this.store.receiptKey() : (await generateKeyPair()).privateKeyPem);
      const keys = new Map<string, Promise<string | undefined>>();
      const platformKey = (id: string) => {
        let k = keys.get(id);
        if (!k) {
          k = this.client.platform.receiptKey(id).then((r) => r.publicKeyPem, () => { keys.delete(id); return undefined; });
          keys.set(id, k);
        }
        return k;
      };
      // the provider id is checked on the grants of opens (open below), where the gateway's answer names it;
      // a top-up's grant is checked against the seller the grants before it named
      const self = this;
      this.checkerOptions = { get providerId() { return self.providerId; }, sellerPrivateKeyPem, platformKey, store: this.store, ...(this.opts.now ? { now: this.opts.now } : {}) };
      return new SessionChecker(this.checkerOptions);
    })();
    this.checker.catch(() => { this.checker = undefined; }); // the store's key unreadable now: tried again at a later call
    return this.checker;
  }

  private startTimer(): void {
    const ms = this.opts.claimIntervalMs ?? DEFAULT_CLAIM_INTERVAL_MS;
    if (this.timer || this.closed || !(ms > 0)) return;
    this.timer = setInterval(() => void this.claim(), ms);
    (this.timer as { unref?: () => void }).unref?.();
  }

  /**
   * The price a call of the capability pays, as the gateway quotes it (read at most once a minute,
   * then in the background): a metered capability's maximum, with its metering.
   */
  async priceOf(capabilityId: string): Promise<{ priceMinor: string; currency: string; metering?: Metering }> {
    const known = this.prices.get(capabilityId);
    if (known && !known.refreshing && this.now() - known.at > PRICE_TTL_MS) {
      known.refreshing = true;
      this.quote(capabilityId).then((q) => this.notePrice(capabilityId, q.priceMinor, q.currency, q.metering), (e: unknown) => { known.refreshing = false; this.report(e); });
    }
    if (known) return known;
    const q = await this.quote(capabilityId);
    this.notePrice(capabilityId, q.priceMinor, q.currency, q.metering);
    return q;
  }

  /** A challenge the gateway issued says what the capability costs now (a metered one: its maximum and metering). */
  notePrice(capabilityId: string, priceMinor: string, currency: string, metering?: Metering): void {
    this.prices.set(capabilityId, { priceMinor, currency, ...(metering ? { metering } : {}), at: this.now() });
  }

  /** The seller's public receipt key (SPKI PEM), as grants name it. */
  async publicKeyPem(): Promise<string> {
    return (await this.checkerOf()).publicKeyPem();
  }

  /** Opens the buyer's session at the gateway (policies, hold of the cap) and keeps its grant. Gateway refusals throw AgentpayError. */
  async open(open: SessionOpen, capabilityId: string): Promise<SessionGrant> {
    if (open.capabilityId !== capabilityId) {
      throw new AgentpayError('VALIDATION_FAILED', `the open request is for capability ${open.capabilityId ?? 'null (all of the seller\'s)'}, and this route sells ${capabilityId}: open a session for ${capabilityId}`, { status: 400, details: { field: 'capabilityId' } });
    }
    const checker = await this.checkerOf();
    const { grant } = await this.client.sessions.open({ open, sellerPublicKey: await checker.publicKeyPem() });
    // the grant came from this seller's own authenticated open: its provider id is this seller's
    await new SessionChecker({ ...this.checkerOptions!, providerId: grant.providerId }).acceptGrant(grant);
    this.providerId ||= grant.providerId;
    this.startTimer();
    return grant;
  }

  /**
   * The buyer's top-up, signed by its wallet key: forwarded to the gateway (policies, hold of the
   * increase), and the raised grant replaces the one kept, so that vouchers up to the new cap are
   * accepted. Gateway refusals throw AgentpayError.
   */
  async topUp(topUp: SessionTopUp, capabilityId: string): Promise<SessionGrant> {
    const rec = await this.store.get(topUp.sessionId);
    if (!rec) throw new AgentpayError('SESSION_NOT_FOUND', `this seller does not know session ${topUp.sessionId} (closed already, or its vouchers were lost at a restart): open another`, { status: 404, details: { sessionId: topUp.sessionId } });
    if (rec.grant.capabilityId !== null && rec.grant.capabilityId !== capabilityId) {
      throw new AgentpayError('VALIDATION_FAILED', `session ${topUp.sessionId} pays for ${rec.grant.capabilityId}, and this route sells ${capabilityId}`, { status: 400, details: { field: 'sessionId' } });
    }
    const checker = await this.checkerOf();
    const { grant } = await this.client.sessions.topUp(topUp.sessionId, topUp);
    // a session kept from before a restart: its grant was checked when it was opened
    this.providerId ||= rec.grant.providerId;
    // the checker of the vouchers takes it, so that no voucher check in flight puts the old grant back
    await checker.acceptGrant(grant);
    return grant;
  }

  /** The grant of a session this seller keeps (for the other dialects' corrective 402), or undefined. */
  async grantOf(sessionId: string): Promise<SessionGrant | undefined> {
    return (await this.store.get(sessionId))?.grant;
  }

  /** The per-call check; an accepted voucher's price counts as in flight until `settle`. */
  async check(voucher: Voucher, call: { priceMinor: string; requestHash: string; capabilityId: string }): Promise<VoucherDecision> {
    const d = await (await this.checkerOf()).check(voucher, call);
    if (d.kind === 'accept') {
      const f = this.inFlight.get(d.sessionId) ?? { amount: 0n, count: 0, idle: [] };
      f.amount += BigInt(d.chargedMinor);
      f.count += 1;
      this.inFlight.set(d.sessionId, f);
      this.accepted += 1;
      this.startTimer();
    }
    return d;
  }

  /**
   * After the handler: the receipt of a success, null for a failure (its price goes back to the
   * session's credit). A metered call charges `chargedMinor` (units × unit price), at most its price.
   */
  async settle(d: SessionCall, outcome: { ok: boolean; responseHash: string; chargedMinor?: string }): Promise<SessionReceipt | null> {
    try {
      return await (await this.checkerOf()).settle(d, outcome);
    } finally {
      if (d.kind === 'accept') {
        const f = this.inFlight.get(d.sessionId);
        if (f) {
          f.amount -= BigInt(d.chargedMinor);
          f.count -= 1;
          if (f.count === 0) {
            this.inFlight.delete(d.sessionId);
            f.idle.forEach((wake) => wake());
          }
        }
        if (this.accepted >= (this.opts.claimEvery ?? DEFAULT_CLAIM_EVERY)) void this.claim();
      }
    }
  }

  private idle(sessionId: string): Promise<void> {
    const f = this.inFlight.get(sessionId);
    if (!f) return Promise.resolve();
    return new Promise((resolve) => f.idle.push(resolve));
  }

  /** What one session has to claim now: the highest voucher and what its served calls cost, or null. */
  private async claimOf(sessionId: string): Promise<{ sessionId: string; voucher: Voucher; amountMinor: string } | null> {
    const rec = await this.store.get(sessionId);
    if (!rec?.voucher) return null;
    // on a shared store the record counts every instance's calls in flight; else this process's are all there are
    const served = BigInt(rec.spentMinor) - (this.store.shared ? BigInt(rec.inFlightMinor ?? '0') : (this.inFlight.get(sessionId)?.amount ?? 0n));
    if (served <= BigInt(rec.claimedMinor)) return null;
    return { sessionId, voucher: rec.voucher, amountMinor: served.toString() };
  }

  /** Sends the claims (100 sessions per request) and records what the gateway took. */
  private async send(claims: { sessionId: string; voucher: Voucher; amountMinor: string }[]): Promise<void> {
    const checker = await this.checkerOf();
    for (let i = 0; i < claims.length; i += 100) {
      const chunk = claims.slice(i, i + 100);
      const results = await this.client.sessions.claim(chunk);
      for (const [j, r] of results.entries()) {
        const c = chunk[j]!;
        if (r.status === 200 && 'cumulativeMinor' in r.body) await checker.claimed(c.sessionId, r.body.cumulativeMinor);
        else {
          const code = 'error' in r.body ? r.body.error.code : 'ERROR';
          // over for good at the gateway: nothing more will be taken
          if (code === 'SESSION_CLOSED' || code === 'SESSION_EXPIRED' || code === 'SESSION_NOT_FOUND') await checker.forget(c.sessionId);
          this.report(new AgentpayError(code, `the claim of session ${c.sessionId} was refused: ${'error' in r.body ? r.body.error.message : r.status}`, { status: r.status }));
        }
      }
    }
  }

  /**
   * Claims every session with something served and not claimed; one claim run at a time. Asked
   * during a run, another run follows it: what was served meanwhile is not left to the timer.
   */
  claim(): Promise<void> {
    if (this.claiming) {
      this.claimAgain = true;
      return this.claiming;
    }
    this.claiming = (async () => {
      this.accepted = 0;
      const claims = [];
      for (const rec of await this.store.all()) {
        const c = await this.claimOf(rec.grant.sessionId);
        if (c) claims.push(c);
      }
      if (claims.length > 0) await this.send(claims);
    })().catch((e: unknown) => this.report(e)).finally(() => {
      this.claiming = undefined;
      if (this.claimAgain) {
        this.claimAgain = false;
        void this.claim();
      }
    });
    return this.claiming;
  }

  /**
   * The buyer's close, signed by the session key: once the session's running calls finished, its
   * served calls are claimed and it is closed at the gateway (the rest of the cap goes back to the buyer).
   */
  async closeFor(request: SessionCloseRequest): Promise<Session> {
    const rec = await this.store.get(request.sessionId);
    if (!rec) throw new AgentpayError('SESSION_NOT_FOUND', `this seller does not know session ${request.sessionId} (closed already, or its vouchers were lost at a restart)`, { status: 404, details: { sessionId: request.sessionId } });
    if (!(await verifyObject(rec.grant.sessionPublicKey, request as unknown as Record<string, unknown>))) {
      throw new AgentpayError('VOUCHER_INVALID', `the close is not signed by the key of session ${request.sessionId}`, { status: 402, details: { sessionId: request.sessionId } });
    }
    await this.idle(request.sessionId);
    await this.claiming;
    const c = await this.claimOf(request.sessionId);
    if (c) await this.send([c]);
    const session = await this.client.sessions.close(request.sessionId);
    await (await this.checkerOf()).forget(request.sessionId);
    return session;
  }

  /** Stops the timer and claims what is served (a server's shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await Promise.all([...this.inFlight.keys()].map((id) => this.idle(id)));
    await this.claim();
    // a run asked for during the last one follows it
    while (this.claiming) await this.claiming;
  }
}
