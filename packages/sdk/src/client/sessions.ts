/**
 * Payment sessions (docs/protocol.md § Payment sessions): the seller opens (with the buyer's
 * signed open request), claims and closes with a provider key holding payments:write; the buyer's
 * workspace ends its own early (wallets:write); both read them with receipts:read.
 */
import type { HttpClient } from './http.js';
import type {
  OpenedSession, Session, SessionClaimList, SessionClaimResult, SessionOpen, SessionPage, SessionTopUp, Voucher,
} from '../contract/sessions.js';

/** What a claim's own request would have answered: its status and body (an error envelope from 400 up). */
export interface SessionClaimOutcome {
  status: number;
  body: SessionClaimResult | { error: { code: string; message: string; details: Record<string, unknown> } };
}

export class SessionsApi {
  constructor(private http: HttpClient) {}

  /** Opens the session the buyer signed: the cap is held on its wallet; answers the session and the platform-signed grant. */
  open(input: { open: SessionOpen; sellerPublicKey: string }): Promise<OpenedSession> {
    return this.http.request('POST', '/v1/sessions', { body: input });
  }
  /** Raises the cap from the buyer's signed top-up: the increase is held; answers the session and a new grant. */
  topUp(sessionId: string, topUp: SessionTopUp): Promise<OpenedSession> {
    return this.http.request('POST', `/v1/sessions/${encodeURIComponent(sessionId)}/top-up`, { body: { topUp } });
  }
  /** Claims the highest voucher of each session, each on its own (1 to 100), up to `amountMinor` when given (at most the voucher's cumulative). */
  async claim(claims: { sessionId: string; voucher: Voucher; amountMinor?: string }[]): Promise<SessionClaimOutcome[]> {
    return (await this.http.request<{ results: SessionClaimOutcome[] }>('POST', '/v1/sessions/claims', { body: { claims } })).results;
  }
  /** Closes the session (claim its highest voucher first: a closed session takes no claim); the rest goes back to the buyer. */
  async close(sessionId: string): Promise<Session> {
    return (await this.http.request<{ session: Session }>('POST', `/v1/sessions/${encodeURIComponent(sessionId)}/close`, { body: {} })).session;
  }
  /** The buyer's workspace ends its session early: no voucher counts from now on; the seller's claims are taken for one more claim window, then the rest is released. */
  async end(sessionId: string): Promise<Session> {
    return (await this.http.request<{ session: Session }>('POST', `/v1/sessions/${encodeURIComponent(sessionId)}/end`, { body: {} })).session;
  }
  /** The claims of a session that moved money, oldest first. */
  claims(sessionId: string): Promise<SessionClaimList> {
    return this.http.request('GET', `/v1/sessions/${encodeURIComponent(sessionId)}/claims`);
  }
  async get(sessionId: string): Promise<Session> {
    return (await this.http.request<{ session: Session }>('GET', `/v1/sessions/${encodeURIComponent(sessionId)}`)).session;
  }
  /** Newest first; `walletId` and `sellerId` (a provider id) narrow the list (a seller sees only its own sessions anyway). */
  list(opts: { status?: Session['status']; walletId?: string; sellerId?: string; limit?: number; after?: string } = {}): Promise<SessionPage> {
    return this.http.request('GET', '/v1/sessions', {
      query: { status: opts.status, walletId: opts.walletId, sellerId: opts.sellerId, limit: opts.limit, after: opts.after },
    });
  }
}
