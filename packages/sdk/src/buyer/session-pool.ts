/**
 * The buyer's payment sessions, kept by itself (docs/sdk.md § Payment sessions): when a seller's
 * 402 offers a session, the first call opens one (signed by the wallet's key, one gateway trip
 * through the seller), later calls to that seller and capability pay with a voucher, a session
 * whose cap is spent (or that expired) is closed and another opened, a corrective 402 is resynced
 * from, and `closeAll` closes every session (the rest of each cap goes back to the wallet).
 * Free of any transport: the caller gives a `send` that repeats its request with extra headers.
 *
 * Top-ups: when a session's cap cannot cover the next call and the session is otherwise good (open,
 * not expired), the pool signs a `session.topup` with the wallet's key and sends it to the seller,
 * which forwards it to the gateway (policies decide on the increase, which is held on the wallet)
 * and takes the raised grant: the same session goes on. Each top-up adds `topUpMinor` (default:
 * the first cap), up to `maxCapMinor` (default: DEFAULT_MAX_CAP_FACTOR times the first cap); a
 * session that cannot be raised (past that, or the gateway refused) is closed and another opened,
 * as without top-ups. One top-up at a time per session: parallel calls that need it wait for it.
 *
 * Parallel calls of one session: the seller checks one session's vouchers one at a time, in
 * arrival order (per-session ordering, ../seller/sessions.ts). Each call here signs its voucher
 * with the next sequence and a cumulative amount covering everything settled, everything still
 * in flight and its own price, and never below a voucher signed before; a voucher overtaken by a
 * later one comes back as VOUCHER_STALE with the seller's state, and the call signs a new one.
 * What a voucher pays ahead for a call that failed is not claimed: the seller claims what it
 * served, which the receipts add up to.
 *
 * No Node imports.
 */
import { toError } from '../client/http.js';
import { AgentpayError } from '../errors.js';
import { decodeHeader, encodeHeader, responseHash, type PriceChallenge } from '../protocol.js';
import {
  SESSION_CLOSE_HEADER, SESSION_GRANT_HEADER, SESSION_OPEN_HEADER, SESSION_RECEIPT_HEADER, SESSION_TOPUP_HEADER, VOUCHER_HEADER,
  type Session, type SessionGrant, type SessionOffer, type SessionReceipt, type SessionState,
} from '../contract/sessions.js';
import { openRequest, type BuyerSession } from './session.js';
import type { Payer } from './payer.js';

export interface BuyerSessionOptions {
  /**
   * 'session' (default): when a seller's 402 offers a session, pay with one; 'per-call': never open
   * sessions, every call is authorized at the gateway.
   */
  prefer?: 'session' | 'per-call';
  /** the cap of each session opened, minor units (default: DEFAULT_SESSION_CALLS calls at the quoted price); held on the wallet while it is open */
  capMinor?: string | bigint;
  /** how long a session lasts, ms (default 1 hour; at most 30 days) */
  expiresInMs?: number;
  /**
   * what each top-up adds to a session's cap, minor units (default: the session's first cap). A
   * top-up happens when the cap cannot cover the next call; 0: no top-ups (the session is closed and another opened)
   */
  topUpMinor?: string | bigint;
  /** the most a session's cap reaches through top-ups, minor units (default: DEFAULT_MAX_CAP_FACTOR times its first cap); past it another session is opened */
  maxCapMinor?: string | bigint;
}

export const DEFAULT_SESSION_CALLS = 100n;
export const DEFAULT_SESSION_EXPIRES_MS = 60 * 60 * 1000;
/** without `maxCapMinor`, top-ups raise a session's cap to at most this many times its first cap */
export const DEFAULT_MAX_CAP_FACTOR = 10n;
/** how many times one call signs a new voucher after being overtaken before it gives up */
const MAX_ATTEMPTS = 50;
/** after the gateway refused an open for want of money or by a policy, calls to that seller go per-call for this long */
const PER_CALL_AFTER_REFUSAL_MS = 60_000;

/** The seller's answer to a request, as the pool needs it. */
export interface SentAnswer {
  status: number;
  header(name: string): string | null;
  bytes: Uint8Array;
}
/** Repeats the caller's request with these headers added. */
export type Send = (headers: Record<string, string>) => Promise<SentAnswer>;

/** A call paid with a session's voucher. */
export interface SessionPaid {
  answer: SentAnswer;
  /** the seller-signed receipt, verified against the grant's key and the bytes received; null when the call failed (nothing charged) */
  receipt: SessionReceipt | null;
  sessionId: string;
}

interface Live {
  key: string;
  session: BuyerSession;
  price: bigint;
  /** what the receipts of finished calls charged */
  settled: bigint;
  /** the price of each call in flight */
  inFlight: Map<symbol, bigint>;
  retiring: boolean;
  /** the seller no longer knows it: nothing to close there */
  dead: boolean;
  /** sends the close to the seller (the route the session was opened on, without a body) */
  closer: Send;
  /** the cap it was opened with */
  firstCap: bigint;
  /** the top-up under way: resolves true once the cap was raised */
  raising?: Promise<boolean> | undefined;
  /** how many top-ups raised its cap */
  topUps: number;
}

const utf8 = new TextDecoder();

function jsonOf(bytes: Uint8Array): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(utf8.decode(bytes)) as unknown;
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A session offer that matches the signed challenge beside it. */
export function offerOf(body: unknown, challenge: PriceChallenge): SessionOffer | undefined {
  const o = (body as { session?: SessionOffer } | null)?.session;
  if (!o || typeof o !== 'object' || o.version !== 1) return undefined;
  return o.capabilityId === challenge.capabilityId && o.providerId === challenge.providerId ? o : undefined;
}

/** The pool of each buyer's payer (createBuyer registers it): the axios adapter pays with the same sessions. */
const pools = new WeakMap<Payer, SessionPool>();
export const poolOf = (payer: Payer): SessionPool | undefined => pools.get(payer);

export class SessionPool {
  private readonly live = new Map<string, Live>();
  private readonly opening = new Map<string, Promise<Live | null>>();
  private readonly perCallUntil = new Map<string, number>();
  private readonly closing = new Set<Promise<void>>();
  /** retired with calls still in flight: closed once they are done */
  private readonly draining = new Set<Live>();
  private readonly closed: Session[] = [];
  private readonly errors: unknown[] = [];

  constructor(private readonly payer: Payer, private readonly opts: BuyerSessionOptions, private readonly now: () => number) {
    pools.set(payer, this);
  }

  /** Whether a call answered with this offer is paid with a session. */
  wants(offer: SessionOffer | undefined, origin: string): boolean {
    if (!offer || this.opts.prefer === 'per-call' || !this.payer.signWithWalletKey || !this.payer.platformKey) return false;
    const until = this.perCallUntil.get(`${origin} ${offer.capabilityId}`);
    return until === undefined || this.now() >= until;
  }

  /** An open session of the seller at `origin` for the capability, usable for another call. */
  has(origin: string, capabilityId: string): boolean {
    const l = this.live.get(`${origin} ${capabilityId}`);
    return l !== undefined && !l.retiring;
  }

  /** The sessions open now (retiring ones included). */
  sessions(): { sessionId: string; capMinor: string; settledMinor: string; inFlight: number; topUps: number }[] {
    return [...this.live.values()].map((l) => ({ sessionId: l.session.sessionId, capMinor: l.session.grant.capMinor, settledMinor: l.settled.toString(), inFlight: l.inFlight.size, topUps: l.topUps }));
  }

  /**
   * Pays one call with a session of the seller at `origin` for the challenge's capability, opening
   * one if needed. null: pay this call per-call (the gateway refused the open for want of money or
   * by a policy, or the cap cannot cover one call).
   */
  async pay(a: { origin: string; challenge: PriceChallenge; requestHash: string; send: Send; closer: Send }): Promise<SessionPaid | null> {
    const key = `${a.origin} ${a.challenge.capabilityId}`;
    let hint = 0n;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const live = await this.liveFor(key, a);
      if (!live) return null;
      let others = 0n;
      for (const p of live.inFlight.values()) others += p;
      const need = live.settled + others + live.price;
      const cumulative = need > hint + live.price ? need : hint + live.price;
      const expired = this.now() >= Date.parse(live.session.grant.expiresAt);
      if (cumulative > BigInt(live.session.grant.capMinor) || expired) {
        // a cap too low for this call on a good session: raised, and the voucher signed again
        if (!expired && !live.retiring && (await this.raise(live, cumulative))) continue;
        this.retire(live);
        hint = 0n;
        continue;
      }
      const id = Symbol('call');
      const voucher = await live.session.voucherAt(cumulative, a.requestHash);
      live.inFlight.set(id, live.price);
      let answer: SentAnswer;
      try {
        answer = await a.send({ [VOUCHER_HEADER]: encodeHeader(voucher) });
      } catch (e) {
        // it may have been served: counted as charged, so that later vouchers cover it
        live.inFlight.delete(id);
        live.settled += live.price;
        this.afterCall(live);
        throw e;
      }
      const refusal = answer.status === 402 ? jsonOf(answer.bytes) : undefined;
      if (refusal && 'state' in refusal) {
        live.inFlight.delete(id);
        const code = (refusal.error as { code?: string } | undefined)?.code;
        const state = refusal.state as SessionState | null;
        if (code === 'VOUCHER_STALE' && state) {
          // overtaken by a later voucher: sign the next one from where the seller stands
          hint = BigInt(state.spentMinor);
          this.afterCall(live);
          continue;
        }
        // the seller no longer takes this session (lost at a restart, expired, closed, its cap reached)
        if (code === 'SESSION_NOT_FOUND' || code === 'SESSION_CLOSED') live.dead = true;
        this.retire(live);
        hint = 0n;
        continue;
      }
      const header = answer.header(SESSION_RECEIPT_HEADER);
      let receipt: SessionReceipt | null = null;
      if (header !== null) {
        let r: SessionReceipt;
        try {
          r = decodeHeader<SessionReceipt>(header);
        } catch {
          live.inFlight.delete(id);
          live.settled += live.price;
          this.afterCall(live);
          throw new AgentpayError('INVALID_RECEIPT', `the seller's session receipt header ${SESSION_RECEIPT_HEADER} is not base64url JSON`);
        }
        if (!(await live.session.verifyReceipt(r, await responseHash(answer.bytes))) || r.sequence !== voucher.sequence) {
          live.inFlight.delete(id);
          live.settled += live.price;
          this.afterCall(live);
          throw new AgentpayError('INVALID_RECEIPT', `the seller's session receipt is not signed by the key the grant of session ${live.session.sessionId} names, or does not cover the bytes received`, { body: { receipt: r } });
        }
        receipt = r;
      }
      live.inFlight.delete(id);
      // a failure (no receipt, 4xx/5xx) charged nothing; a success without a receipt is counted as charged
      live.settled += receipt ? BigInt(receipt.chargedMinor) : answer.status >= 400 ? 0n : live.price;
      this.afterCall(live);
      return { answer, receipt, sessionId: live.session.sessionId };
    }
    throw new AgentpayError('VOUCHER_STALE', `the seller kept refusing this call's vouchers as overtaken (${MAX_ATTEMPTS} tries); nothing was charged for it. Retry, or pay per-call (sessions: { prefer: 'per-call' })`);
  }

  private async liveFor(key: string, a: { origin: string; challenge: PriceChallenge; send: Send; closer: Send }): Promise<Live | null> {
    const l = this.live.get(key);
    if (l && !l.retiring) return l;
    let opening = this.opening.get(key);
    if (!opening) {
      opening = this.open(key, a).finally(() => this.opening.delete(key));
      this.opening.set(key, opening);
    }
    return opening;
  }

  private async open(key: string, a: { challenge: PriceChallenge; send: Send; closer: Send }): Promise<Live | null> {
    const c = a.challenge;
    const price = BigInt(c.amountMinor);
    const cap = this.opts.capMinor !== undefined ? BigInt(this.opts.capMinor) : price * DEFAULT_SESSION_CALLS;
    if (cap < price || price <= 0n) return null;
    const sign = this.payer.signWithWalletKey!;
    const { open, session: pending } = await openRequest({
      walletId: this.payer.walletId, sign: (u) => sign(u as unknown as Record<string, unknown>), providerId: c.providerId, capabilityId: c.capabilityId,
      capMinor: cap.toString(), currency: c.currency, expiresAt: new Date(this.now() + (this.opts.expiresInMs ?? DEFAULT_SESSION_EXPIRES_MS)).toISOString(), now: this.now,
    });
    const answer = await a.send({ [SESSION_OPEN_HEADER]: encodeHeader(open) });
    const header = answer.header(SESSION_GRANT_HEADER);
    if (answer.status !== 200 || header === null) {
      const body = jsonOf(answer.bytes);
      const code = (body?.error as { code?: string } | undefined)?.code;
      if (code === 'INSUFFICIENT_FUNDS' || code === 'POLICY_DENIED') {
        // the cap is more than the wallet or its policies allow at once: this seller is paid per-call for a while
        this.perCallUntil.set(key, this.now() + PER_CALL_AFTER_REFUSAL_MS);
        return null;
      }
      if (body?.error) throw toError({ status: answer.status, headers: new Headers(), body });
      throw new AgentpayError('SESSION_NOT_FOUND', `the seller answered the session open with ${answer.status} and no grant`, { status: answer.status });
    }
    let grant: SessionGrant;
    try {
      grant = decodeHeader<SessionGrant>(header);
    } catch {
      throw new AgentpayError('INVALID_GRANT', `the seller's ${SESSION_GRANT_HEADER} header is not base64url JSON`);
    }
    const pem = await this.payer.platformKey!(grant.signingKeyId);
    if (!pem) throw new AgentpayError('INVALID_GRANT', `the grant of session ${grant.sessionId} names an unknown platform key ${grant.signingKeyId}`);
    const session = await pending.start(grant, pem);
    const live: Live = { key, session, price, settled: 0n, inFlight: new Map(), retiring: false, dead: false, closer: a.closer, firstCap: cap, topUps: 0 };
    this.live.set(key, live);
    return live;
  }

  /**
   * Raises the cap of a session so that it covers `need` (the cumulative amount of the next
   * voucher): a top-up signed with the wallet's key, sent to the seller, and the raised grant
   * checked. One at a time per session; false when it cannot be raised (top-ups off, past
   * `maxCapMinor`, the seller or the gateway refused, the seller unreachable): the caller retires
   * the session and opens another, whose open the gateway decides on again.
   */
  private async raise(live: Live, need: bigint): Promise<boolean> {
    // another call is raising it: go on from its result (the loop recomputes what is needed)
    if (live.raising) return live.raising;
    const step = this.opts.topUpMinor !== undefined ? BigInt(this.opts.topUpMinor) : live.firstCap;
    const sign = this.payer.signWithWalletKey;
    if (step <= 0n || !sign) return false;
    const cap = BigInt(live.session.grant.capMinor);
    const max = this.opts.maxCapMinor !== undefined ? BigInt(this.opts.maxCapMinor) : live.firstCap * DEFAULT_MAX_CAP_FACTOR;
    let to = cap + step;
    while (to < need) to += step;
    if (to > max) to = max;
    if (to < need || to <= cap) return false;
    const raising = (async (): Promise<boolean> => {
      const request = await live.session.topUpRequest((u) => sign(u as unknown as Record<string, unknown>), to);
      const answer = await live.closer({ [SESSION_TOPUP_HEADER]: encodeHeader(request) });
      const header = answer.header(SESSION_GRANT_HEADER);
      if (answer.status !== 200 || header === null) return false;
      const grant = decodeHeader<SessionGrant>(header);
      const pem = await this.payer.platformKey!(grant.signingKeyId);
      if (!pem) return false;
      await live.session.raised(grant, pem);
      live.topUps += 1;
      return true;
    })().catch(() => false).finally(() => { live.raising = undefined; });
    live.raising = raising;
    return raising;
  }

  /** No more calls on it; closed once its calls in flight are done. */
  private retire(live: Live): void {
    if (live.retiring) return;
    live.retiring = true;
    if (this.live.get(live.key) === live) this.live.delete(live.key);
    this.draining.add(live);
    this.afterCall(live);
  }

  private afterCall(live: Live): void {
    if (!live.retiring || live.inFlight.size > 0 || (live as { closing?: boolean }).closing) return;
    (live as { closing?: boolean }).closing = true;
    this.draining.delete(live);
    if (live.dead) return;
    const p: Promise<void> = this.closeAtSeller(live).catch((e: unknown) => { this.errors.push(e); }).finally(() => { this.closing.delete(p); });
    this.closing.add(p);
  }

  private async closeAtSeller(live: Live): Promise<void> {
    const request = await live.session.closeRequest();
    const answer = await live.closer({ [SESSION_CLOSE_HEADER]: encodeHeader(request) });
    const body = jsonOf(answer.bytes);
    if (answer.status !== 200 || !body?.session) {
      if (body?.error) throw toError({ status: answer.status, headers: new Headers(), body });
      throw new AgentpayError('SESSION_NOT_FOUND', `the seller answered the close of session ${live.session.sessionId} with ${answer.status}`, { status: answer.status });
    }
    this.closed.push(body.session as Session);
  }

  /**
   * Closes every session once its calls in flight are done: the seller claims what it served and
   * closes each at the gateway, and the rest of each cap goes back to the wallet. Answers the
   * sessions closed since the last closeAll; throws the first failure after trying them all.
   */
  async closeAll(): Promise<Session[]> {
    for (const l of [...this.live.values()]) this.retire(l);
    while (this.closing.size > 0 || this.draining.size > 0) {
      if (this.closing.size > 0) await Promise.all([...this.closing]);
      else await new Promise((r) => setTimeout(r, 10)); // calls still in flight on a retired session
    }
    const closed = this.closed.splice(0);
    const errors = this.errors.splice(0);
    if (errors.length > 0) throw errors[0];
    return closed;
  }
}
