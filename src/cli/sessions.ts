/**
 * The `agentpay sessions` commands' work (docs/cli.md § agentpay sessions), and how a person sees
 * payment sessions: a seller's key sees its sales' sessions and closes them (the rest released at
 * once); a workspace key sees its wallets' sessions and ends them early (the seller's claims are
 * taken for one more claim window, then the rest is released: docs/protocol.md § Payment sessions).
 */
import type { AgentpayClient } from 'agentpay-sdk/client';
import type { Session, SessionClaim, SessionPage } from 'agentpay-sdk/contract';
import { moneyText, renderFields, renderTable } from './output.js';

export interface SessionDetail {
  session: Session;
  claims: SessionClaim[];
}

/** One session with every claim that moved money. */
export async function showSession(client: AgentpayClient, id: string): Promise<SessionDetail> {
  const [session, { claims }] = await Promise.all([client.sessions.get(id), client.sessions.claims(id)]);
  return { session, claims };
}

export interface ClosedSession {
  session: Session;
  /** who closed it: the seller (the rest released now) or the buyer's workspace (ended early) */
  closedBy: 'seller' | 'buyer';
  /** what went back to the buyer's wallet by this close: the rest of the cap when the seller closed an open session, else 0 */
  releasedMinor: string;
  /** the buyer's end: what is still held, released at `releasesAt` unless the seller claims it first */
  pendingMinor: string;
  releasesAt: string | null;
  /** the session was closed, expired or ended already: nothing changed */
  unchanged: boolean;
}

/**
 * Closes a session as the key's tenant may: a provider key (the seller) closes it and the rest is
 * released at once; a workspace key (the buyer) ends it early, and the rest is released when the
 * seller's claim window ends.
 */
export async function closeSession(client: AgentpayClient, id: string): Promise<ClosedSession> {
  const me = await client.auth.whoami();
  const before = await client.sessions.get(id);
  if (me.tenant.kind === 'provider') {
    const session = await client.sessions.close(id);
    const released = before.status === 'open' ? BigInt(session.capMinor) - BigInt(session.claimedMinor) : 0n;
    return { session, closedBy: 'seller', releasedMinor: released.toString(), pendingMinor: '0', releasesAt: null, unchanged: before.status !== 'open' };
  }
  const session = await client.sessions.end(id);
  const open = session.status === 'open';
  return {
    session,
    closedBy: 'buyer',
    releasedMinor: '0',
    pendingMinor: open ? session.heldMinor : '0',
    releasesAt: open ? session.claimWindowEndsAt : null,
    unchanged: before.status !== 'open' || before.expiresAt === session.expiresAt,
  };
}

const money = (s: Session, amountMinor: string) => moneyText(amountMinor, s.currency);

/** Newest first, and how to get the next page. */
export function sessionPageText(page: SessionPage, limit: number | undefined): string {
  const table = renderTable(page.sessions, [
    { header: 'ID', get: (s) => s.id },
    { header: 'STATUS', get: (s) => s.status },
    { header: 'WALLET', get: (s) => s.walletId },
    { header: 'SELLER', get: (s) => s.providerId },
    { header: 'CAP', get: (s) => money(s, s.capMinor) },
    { header: 'CLAIMED', get: (s) => money(s, s.claimedMinor) },
    { header: 'HELD', get: (s) => money(s, s.heldMinor) },
    { header: 'EXPIRES', get: (s) => s.expiresAt },
  ], '(no sessions)');
  if (!page.nextCursor) return table;
  return `${table}\nnextCursor: ${page.nextCursor}  (next page: agentpay sessions list --after ${page.nextCursor}${limit ? ` --limit ${limit}` : ''})`;
}

export function sessionFields(s: Session): string {
  return renderFields([
    ['id', s.id],
    ['status', s.status],
    ['buyer wallet', s.walletId],
    ['buyer workspace', s.workspaceId],
    ['seller', s.providerId],
    ['capability', s.capabilityId ?? 'all of the seller\'s'],
    ['pays to', s.payTo],
    ['cap', money(s, s.capMinor)],
    ['claimed', money(s, s.claimedMinor)],
    ['fees', money(s, s.feeMinor)],
    ['held', money(s, s.heldMinor)],
    ['last sequence', s.lastSequence],
    ['opened', s.createdAt],
    ['expires', s.expiresAt],
    ['claims until', s.claimWindowEndsAt],
    ['closed', s.closedAt],
  ]);
}

export function sessionDetailText(d: SessionDetail): string {
  const s = d.session;
  const claims = renderTable(d.claims, [
    { header: 'TIME', get: (c) => c.createdAt },
    { header: 'SEQUENCE', get: (c) => c.sequence },
    { header: 'CUMULATIVE', get: (c) => money(s, c.cumulativeMinor) },
    { header: 'AMOUNT', get: (c) => money(s, c.amountMinor) },
    { header: 'FEE', get: (c) => money(s, c.feeMinor) },
  ], '(no claims yet)');
  return `${sessionFields(s)}\n\nclaims:\n${claims}`;
}

export function closedSessionText(c: ClosedSession): string {
  const s = c.session;
  let what: string;
  if (c.unchanged) what = `session ${s.id} is ${s.status === 'open' ? 'ended already' : s.status}; nothing changed`;
  else if (c.closedBy === 'seller') what = `closed session ${s.id}: ${money(s, c.releasedMinor)} released to wallet ${s.walletId}`;
  else what = `ended session ${s.id}: no voucher counts from now on; ${money(s, c.pendingMinor)} still held is released to wallet ${s.walletId} at ${c.releasesAt} unless the seller claims it first`;
  return `${what}\n\n${sessionFields(s)}`;
}
