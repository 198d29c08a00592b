/**
 * Helpers for driving the payment protocol through a real gateway: capabilities made
 * through the repositories (the capability routes are another piece of work), proofs
 * signed the way a buyer signs them, and ledger checks over the whole database.
 */
import { createHash } from 'node:crypto';
import { expect } from 'vitest';
import { signObject, verifyObject } from '../../src/core/ed25519.js';
import type { Capability } from '../../src/store/repos/market.js';
import type { AgentpayClient, Challenge, PaymentProof, Receipt } from '../../packages/sdk/src/client/index.js';
import type { TestGateway } from '../helpers/gateway.js';
import { sqliteOf } from '../helpers/gateway.js';

export async function createCapability(
  t: TestGateway,
  providerId: string,
  opts: { priceMinor?: string; status?: Capability['status']; name?: string } = {},
): Promise<string> {
  const ctx = t.gw.services.ctx;
  return ctx.store.tx(async (r) => {
    const now = ctx.clock.now();
    const id = ctx.ids.next('capability');
    const versionId = ctx.ids.next('capabilityVersion');
    await r.capabilities.insert({
      id, providerId, name: opts.name ?? 'test capability', description: 'a capability for payment tests', protocol: 'rest',
      priceMinor: BigInt(opts.priceMinor ?? '100'), currency: 'USD', category: 'test', tags: [], schema: null, latencyP50Ms: null,
      toolName: null, metering: null, status: opts.status ?? 'active', currentVersionId: versionId, createdAt: now, updatedAt: now,
      deprecatedAt: opts.status === 'deprecated' ? now : null,
    });
    await r.capabilityVersions.insert({
      id: versionId, capabilityId: id, version: '1', endpoint: 'https://seller.example/thing',
      address: { kind: 'url', url: 'https://seller.example/thing' }, schema: null, hash: 'sha256:test', createdAt: now,
    });
    return id;
  });
}

/** A fresh verified seller with one capability at `priceMinor`, so its balances start at zero. */
export async function newSeller(t: TestGateway, priceMinor = '100') {
  const s = await t.newProvider();
  return { ...s, capabilityId: await createCapability(t, s.id, { priceMinor }) };
}

export async function setPrice(t: TestGateway, capabilityId: string, priceMinor: string): Promise<void> {
  const ctx = t.gw.services.ctx;
  await ctx.store.tx((r) => r.capabilities.update(capabilityId, { priceMinor: BigInt(priceMinor), updatedAt: ctx.clock.now() }));
}

export interface Buyer {
  walletId: string;
  privateKeyPem: string;
  publicKeyPem: string;
}

/** A new agent wallet of the workspace, funded by sandbox credit. */
export async function newBuyer(t: TestGateway, ws: AgentpayClient, fundMinor?: string): Promise<Buyer> {
  const b = await t.newAgentWallet(ws, `agent-${Math.random().toString(36).slice(2, 8)}`);
  if (fundMinor) await ws.wallets.fund(b.walletId, fundMinor);
  return b;
}

/** What a buyer's client does with a challenge: sign a proof with the agent's key. */
export function signProof(challenge: Challenge, buyer: Pick<Buyer, 'walletId' | 'privateKeyPem'>, signedAt = new Date().toISOString()): PaymentProof {
  const unsigned = { version: 1 as const, challenge, walletId: buyer.walletId, signedAt };
  return { ...unsigned, signature: signObject(buyer.privateKeyPem, unsigned) };
}

/** The x-payment header value of a proof. */
export const encodeProof = (proof: PaymentProof) => Buffer.from(JSON.stringify(proof), 'utf8').toString('base64url');

export const hashOf = (body: string) => `sha256:${createHash('sha256').update(body, 'utf8').digest('hex')}`;

/** challenge + proof + authorize, as the seller middleware and the buyer together do it. */
export async function authorizeCall(seller: AgentpayClient, capabilityId: string, buyer: Buyer) {
  const challenge = await seller.payments.challenge(capabilityId);
  return seller.payments.authorize({ capabilityId, payment: signProof(challenge, buyer) });
}

/** A whole successful paid call; returns the receipt. */
export async function paidCall(seller: AgentpayClient, capabilityId: string, buyer: Buyer, body = '{"ok":true}'): Promise<Receipt> {
  const auth = await authorizeCall(seller, capabilityId, buyer);
  return (await seller.payments.complete({ transactionId: auth.transactionId, responseHash: hashOf(body) })).receipt;
}

/** Checks a receipt the way a buyer does: against the platform key named by its signingKeyId. */
export async function verifiesWithPlatformKey(t: TestGateway, receipt: Receipt | Challenge): Promise<boolean> {
  const key = await t.client().platform.receiptKey(receipt.signingKeyId);
  return verifyObject(key.publicKeyPem, receipt as unknown as Record<string, unknown>);
}

/** Expects a refusal with this HTTP status and code. */
export async function refused(p: Promise<unknown>, status: number, code: string): Promise<Record<string, unknown>> {
  const e = await p.then(() => { throw new Error(`expected ${status} ${code}, but the call succeeded`); }, (err: unknown) => err);
  expect(e).toMatchObject({ status, code });
  return e as Record<string, unknown>;
}

interface LedgerRow {
  wallet_id: string;
  seq: bigint;
  type: string;
  amount_minor: bigint;
  hold_minor: bigint;
  balance_after: bigint;
  held_after: bigint;
  transaction_id: string | null;
}

export function ledgerRows(t: TestGateway, filter: { walletId?: string; transactionId?: string } = {}): LedgerRow[] {
  const db = sqliteOf(t.gw);
  if (filter.transactionId) return db.prepare('SELECT * FROM ledger_entries WHERE transaction_id = ? ORDER BY rowid').all(filter.transactionId) as LedgerRow[];
  if (filter.walletId) return db.prepare('SELECT * FROM ledger_entries WHERE wallet_id = ? ORDER BY seq').all(filter.walletId) as LedgerRow[];
  return db.prepare('SELECT * FROM ledger_entries ORDER BY rowid').all() as LedgerRow[];
}

/** Balance and held amount of a wallet, summed from its ledger entries. */
export function ledgerBalance(t: TestGateway, walletId: string): { balance: bigint; held: bigint } {
  let balance = 0n;
  let held = 0n;
  for (const e of ledgerRows(t, { walletId })) {
    balance += e.amount_minor;
    held += e.hold_minor;
  }
  return { balance, held };
}

/**
 * The whole ledger is consistent: every wallet's running sums equal the sum of its
 * entries and were never negative, all balances together equal everything funded,
 * and the held total is exactly what open transactions hold.
 */
export function expectLedgerConsistent(t: TestGateway): void {
  // each wallet's entries in seq order (on PostgreSQL the table's physical order interleaves concurrent inserts)
  const rows = ledgerRows(t).sort((a, b) => (a.wallet_id === b.wallet_id ? Number(a.seq - b.seq) : a.wallet_id < b.wallet_id ? -1 : 1));
  const perWallet = new Map<string, { balance: bigint; held: bigint; seq: bigint }>();
  let funded = 0n;
  for (const e of rows) {
    const w = perWallet.get(e.wallet_id) ?? { balance: 0n, held: 0n, seq: 0n };
    w.balance += e.amount_minor;
    w.held += e.hold_minor;
    expect(e.seq, `gap-free seq in ${e.wallet_id}`).toBe(w.seq + 1n);
    w.seq = e.seq;
    expect(e.balance_after, `running balance of ${e.wallet_id}`).toBe(w.balance);
    expect(e.held_after, `running hold of ${e.wallet_id}`).toBe(w.held);
    expect(e.held_after >= 0n && e.balance_after - e.held_after >= 0n, `available never negative in ${e.wallet_id}`).toBe(true);
    perWallet.set(e.wallet_id, w);
    if (e.type === 'fund') funded += e.amount_minor;
  }
  const total = [...perWallet.values()].reduce((s, w) => s + w.balance, 0n);
  expect(total, 'all balances together equal everything funded').toBe(funded);
  const held = [...perWallet.values()].reduce((s, w) => s + w.held, 0n);
  const open = sqliteOf(t.gw).prepare("SELECT coalesce(sum(amount_minor), 0) AS s FROM transactions WHERE status = 'authorized'").get() as { s: bigint };
  expect(held, 'held total equals what open transactions hold').toBe(BigInt(open.s));
}

export function transactionRow(t: TestGateway, id: string): { status: string; failure_reason: string | null; fee_minor: bigint | null } {
  return sqliteOf(t.gw).prepare('SELECT * FROM transactions WHERE id = ?').get(id) as never;
}

/** A completed purchase by a wallet of the workspace from a fresh seller: for fixtures that need a receipt. */
export async function purchaseReceipt(t: TestGateway, ws: AgentpayClient): Promise<Receipt> {
  const s = await t.newProvider({ name: 'Receipt Seller' });
  const capabilityId = await createCapability(t, s.id, { priceMinor: '10' });
  const buyer = await newBuyer(t, ws, '10');
  return paidCall(s.client, capabilityId, buyer);
}
