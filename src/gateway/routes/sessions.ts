/**
 * Payment sessions (docs/protocol.md § Payment sessions). The seller's middleware opens (the
 * buyer's signed open request), claims (many sessions per request) and closes with a provider
 * key holding payments:write; the buyer's workspace ends its own early with wallets:write; both read
 * them (and their claims) with receipts:read.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { principal } from '../plugins/auth.js';
import { errorResponse } from '../plugins/errors.js';
import { Id, IgnoredTenantIds, OptionalBody } from '../schemas.js';
import {
  ClaimSessionsBody, Closed, CloseSessionBody, EndSessionBody, ErrorEnvelope, SessionClaimList, OpenedSession, OpenSessionBody, Session, SESSION_PAGE_MAX, SessionClaimResult, SessionPage, SessionStatus, TopUpSessionBody,
} from 'agentpay-sdk/contract';

const SessionParams = Type.Object({ id: Id('ses') });
type SessionParams = Static<typeof SessionParams>;

const ListQuery = Type.Object({
  status: Type.Optional(SessionStatus),
  walletId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: "only the sessions paid by this wallet (wal_…, the buyer's)" })),
  sellerId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: "only the sessions of this seller (its provider id; a seller's key sees only its own anyway)" })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: SESSION_PAGE_MAX, description: `page size, 1 to ${SESSION_PAGE_MAX}, default 50` })),
  after: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'the nextCursor of the previous page' })),
  ...IgnoredTenantIds,
}, { additionalProperties: false });

const CloseBody = OptionalBody(CloseSessionBody);
const EndBody = OptionalBody(EndSessionBody);

const OPENING = ['WALLET_NOT_FOUND', 'CAPABILITY_NOT_FOUND', 'INSUFFICIENT_FUNDS', 'POLICY_DENIED', 'APPROVAL_REQUIRED', 'WALLET_FROZEN', 'WALLET_PROVIDER_PAUSED', 'REPLAY_DETECTED', 'CONFLICT'] as const;
const CLAIMING = ['SESSION_NOT_FOUND', 'SESSION_CLOSED', 'SESSION_EXPIRED', 'VOUCHER_INVALID', 'VOUCHER_ABOVE_CAP', 'VOUCHER_STALE', 'CONFLICT'] as const;

export default async function sessionRoutes(app: FastifyInstance) {
  const { sessions } = app.services;
  const write = { scope: 'payments:write' } as const;
  const read = { scope: 'receipts:read' } as const;

  app.post<{ Body: Static<typeof OpenSessionBody> }>('/v1/sessions', { config: { ...write, errors: OPENING }, schema: { summary: "Open a payment session from the buyer's signed open request: holds the cap (the seller)", body: OpenSessionBody, response: { 200: OpenedSession } } }, async (request) =>
    sessions.open(principal(request), request.body),
  );

  // each claim in its own database transaction, all at once (they share commits), each answered
  // with the status and body it would have on its own
  app.post<{ Body: Static<typeof ClaimSessionsBody> }>('/v1/sessions/claims', { config: { ...write, errors: CLAIMING }, schema: { summary: 'Claim the highest voucher of many sessions (the seller)', body: ClaimSessionsBody, response: { 200: Closed({ results: Type.Array(Closed({ status: Type.Integer(), body: Type.Union([SessionClaimResult, ErrorEnvelope]) })) }) } } }, async (request) => {
    const p = principal(request);
    return {
      results: await Promise.all(request.body.claims.map(async (c) => {
        try {
          return { status: 200, body: await sessions.claim(p, { sessionId: c.sessionId, voucher: c.voucher, amountMinor: c.amountMinor }) };
        } catch (e) {
          return errorResponse(e, request.log);
        }
      })),
    };
  });

  app.post<{ Params: SessionParams; Body: Static<typeof CloseBody> }>('/v1/sessions/:id/close', { config: { ...write, errors: ['SESSION_NOT_FOUND', 'CONFLICT'] }, schema: { summary: 'Close a session (after claiming its highest voucher): the rest goes back to the buyer (the seller)', params: SessionParams, body: CloseBody, response: { 200: Closed({ session: Session }) } } }, async (request) => ({
    session: await sessions.close(principal(request), request.params.id),
  }));

  // the buyer's side: its workspace (wallets:write) ends the session early; the seller's claims are taken for one more claim window
  app.post<{ Params: SessionParams; Body: Static<typeof EndBody> }>('/v1/sessions/:id/end', { config: { scope: 'wallets:write', errors: ['SESSION_NOT_FOUND', 'CONFLICT'] }, schema: { summary: "End a session early (the buyer's workspace): no voucher counts from now on, the seller's claims are taken for one more claim window, then the rest is released", params: SessionParams, body: EndBody, response: { 200: Closed({ session: Session }) } } }, async (request) => ({
    session: await sessions.end(principal(request), request.params.id),
  }));

  app.post<{ Params: SessionParams; Body: Static<typeof TopUpSessionBody> }>('/v1/sessions/:id/top-up', { config: { ...write, errors: ['SESSION_NOT_FOUND', 'SESSION_CLOSED', 'SESSION_EXPIRED', 'INSUFFICIENT_FUNDS', 'POLICY_DENIED', 'APPROVAL_REQUIRED', 'WALLET_FROZEN', 'CONFLICT'] }, schema: { summary: "Raise a session's cap from the buyer's signed top-up: holds the increase (the seller)", params: SessionParams, body: TopUpSessionBody, response: { 200: OpenedSession } } }, async (request) =>
    sessions.topUp(principal(request), request.params.id, request.body.topUp),
  );

  app.get<{ Params: SessionParams }>('/v1/sessions/:id', { config: { ...read, errors: ['SESSION_NOT_FOUND'] }, schema: { summary: "A payment session (the seller's, or one of the workspace's wallets')", params: SessionParams, response: { 200: Closed({ session: Session }) } } }, async (request) => ({
    session: await sessions.get(principal(request), request.params.id),
  }));

  app.get<{ Params: SessionParams }>('/v1/sessions/:id/claims', { config: { ...read, errors: ['SESSION_NOT_FOUND'] }, schema: { summary: 'The claims of a payment session that moved money, oldest first', params: SessionParams, response: { 200: SessionClaimList } } }, async (request) =>
    sessions.claims(principal(request), request.params.id),
  );

  app.get<{ Querystring: Static<typeof ListQuery> }>('/v1/sessions', { config: { ...read, errors: ['INVALID_CURSOR'] }, schema: { summary: 'Payment sessions of the caller, newest first, a page at a time', querystring: ListQuery, response: { 200: SessionPage } } }, async (request) =>
    sessions.list(principal(request), request.query),
  );
}
