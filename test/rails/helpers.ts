/**
 * Helpers for the rails tests: a real gateway on a manual clock with the rail job's
 * timer off (tests run it with `runJobs` after moving the clock), raw webhook delivery,
 * payout setup, and ledger checks over the whole database.
 */
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { webhookSecretPath } from '../../src/rails/sandbox/secret.js';
import { SANDBOX_SIGNATURE_HEADER } from '../../src/rails/sandbox/world.js';
import { signWebhook } from '../../src/domain/rails/webhook-signature.js';
import type { GatewayConfig } from '../../src/gateway/config.js';
import type { AgentpayClient, WebhookDelivery } from '../../packages/sdk/src/client/index.js';
import { ManualClock, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { ledgerRows } from '../payments/helpers.js';

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
export const WEBHOOK_PATH = '/v1/rail/webhooks/sandbox-processor';

/** A sandbox gateway on a manual clock (Tuesday 2026-03-03 10:00 UTC); the rail job runs only when a test says so. */
export async function railGateway(config: Partial<GatewayConfig> = {}): Promise<TestGateway & { clock: ManualClock }> {
  const clock = new ManualClock(Date.UTC(2026, 2, 3, 10, 0, 0));
  const t = await startTestGateway({ clock, config: { ...config, rails: { pollIntervalMs: 0, ...config.rails } } });
  return Object.assign(t, { clock });
}

export const runJobs = (t: TestGateway) => t.gw.services.rails.jobs.runOnce();

/** The sandbox processor's webhook secret, as the gateway keeps it in its data directory. */
export const webhookSecret = (t: TestGateway) => readFileSync(webhookSecretPath(t.dataDir), 'utf8').trim();

/** Posts raw bytes to the sandbox processor's webhook route, as the processor does. */
export async function deliver(t: TestGateway, body: string, headers: Record<string, string>): Promise<{ status: number; body: Record<string, any> }> {
  const f = await t.client().http.fetcher();
  const res = await f(`${t.baseUrl}${WEBHOOK_PATH}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

export const redeliver = (t: TestGateway, w: WebhookDelivery) => deliver(t, w.body, w.headers);

/** A webhook body signed with `secret` at `atMs`. */
export function signed(secret: string, body: object, atMs: number): { body: string; headers: Record<string, string> } {
  const text = JSON.stringify(body);
  return { body: text, headers: { [SANDBOX_SIGNATURE_HEADER]: signWebhook(secret, text, atMs) } };
}

/** A fresh provider with a settlement wallet funded by sandbox credit and destinations registered for both assets. */
export async function payee(t: TestGateway, fundMinor = '10000') {
  const s = await t.newProvider({ name: `Payee ${Math.random().toString(36).slice(2, 7)}` });
  if (fundMinor !== '0') await s.client.wallets.fund(s.walletId, fundMinor);
  await s.client.payouts.setDestination(s.id, { destination: 'ext_bank_0001' });
  const usdc = `0x${'ab'.repeat(20)}`;
  await s.client.payouts.setDestination(s.id, { destination: usdc });
  return { ...s, usdcAddress: usdc };
}

/** Sum of the ledger's amounts of a wallet. */
export function balanceOf(t: TestGateway, walletId: string): bigint {
  return ledgerRows(t, { walletId }).reduce((s, e) => s + e.amount_minor, 0n);
}

/** The ledger entries of a wallet as [type, amount] pairs, oldest first. */
export const entries = (t: TestGateway, walletId: string) => ledgerRows(t, { walletId }).map((e) => [e.type, e.amount_minor.toString()]);

/**
 * Money is conserved over the whole database: everything funded (sandbox credits,
 * top-ups, deposits) equals the balances of every wallet but the platform's, plus the
 * fees (the platform revenue wallet), plus everything paid out (payouts less returns);
 * running sums are consistent and never negative.
 */
export function expectConserved(t: TestGateway): { funded: bigint; balances: bigint; fees: bigint; paidOut: bigint } {
  // each wallet's entries in seq order (on PostgreSQL the table's physical order is not the order of a wallet's entries)
  const rows = ledgerRows(t).sort((a, b) => (a.wallet_id === b.wallet_id ? Number(a.seq - b.seq) : a.wallet_id < b.wallet_id ? -1 : 1));
  const byType = new Map<string, bigint>();
  const perWallet = new Map<string, bigint>();
  for (const e of rows) {
    byType.set(e.type, (byType.get(e.type) ?? 0n) + e.amount_minor);
    const b = (perWallet.get(e.wallet_id) ?? 0n) + e.amount_minor;
    expect(e.balance_after, `running balance of ${e.wallet_id}`).toBe(b);
    expect(e.balance_after - e.held_after >= 0n, `available never negative in ${e.wallet_id}`).toBe(true);
    perWallet.set(e.wallet_id, b);
  }
  const get = (k: string) => byType.get(k) ?? 0n;
  const funded = get('fund') + get('topup') + get('deposit');
  const fees = perWallet.get('wal_platform_revenue') ?? 0n;
  const balances = [...perWallet].filter(([id]) => id !== 'wal_platform_revenue').reduce((s, [, b]) => s + b, 0n);
  const paidOut = -(get('payout') + get('payout_return'));
  expect(funded, 'funded = balances + fees + paid out').toBe(balances + fees + paidOut);
  return { funded, balances, fees, paidOut };
}

/** Expects an API refusal with this status and code. */
export async function refusedWith(p: Promise<unknown>, status: number, code: string): Promise<{ details: Record<string, unknown>; message: string }> {
  const e = await p.then(() => { throw new Error(`expected ${status} ${code}, but the call succeeded`); }, (err: unknown) => err);
  expect(e).toMatchObject({ status, code });
  return e as { details: Record<string, unknown>; message: string };
}

export type { TestGateway, AgentpayClient };
