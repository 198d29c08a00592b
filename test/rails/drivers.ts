/**
 * Rail drivers: the outside world of money as the rail scenarios need it, twice over.
 *
 * - `sandbox`: a sandbox-mode gateway with the sandbox adapters; the world is moved by the
 *   sandbox controls and the sandbox processor's signed webhooks (what the rail tests did
 *   before there were real adapters).
 * - `production`: a PRODUCTION-mode gateway configured with the real adapters: Stripe (card
 *   top-ups, Connect bank payouts) against the local fake Stripe (./stripe/fake-stripe.ts),
 *   webhooks signed by the stripe SDK's own test-header helper, and USDC (viem) over a local EVM (Hardhat's EDR)
 *   (./usdc/chain.ts): deposits are real ERC-20 transfers followed by mined blocks, payouts
 *   real transfers from the treasury confirmed by mining. A production gateway refuses the
 *   sandbox adapters and the fund shortcut, so wallets are funded by real (Stripe) top-ups.
 *
 * The scenario files run `describe.each(DRIVERS)` and call `useDriver(kind)` inside: it starts
 * the gateway (and, for production, one local EVM chain and one fake Stripe per file) in a
 * beforeAll and stops them in an afterAll, so a file that runs both drivers starts one chain.
 */
import { copyFileSync, existsSync, mkdtempSync, renameSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Stripe from 'stripe';
import { afterAll, beforeAll, expect } from 'vitest';
import type { RailAdapters } from '../../src/domain/rails/adapters.js';
import { STRIPE_SIGNATURE_HEADER, stripeAdapters } from '../../src/rails/stripe/adapters.js';
import { OfacSdnScreening } from '../../src/rails/screening/ofac-sdn.js';
import { usdcBaseRails, type UsdcBaseAdapter } from '../../src/rails/usdc/adapter.js';
import { SANDBOX_SIGNATURE_HEADER } from '../../src/rails/sandbox/world.js';
import type { AgentpayClient, Payout, RailTransaction, TopUpIntent } from '../../packages/sdk/src/client/index.js';
import { ManualClock, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { FakeStripe } from './stripe/fake-stripe.js';
import { CHAIN_ID, CONFIRMATIONS, startChain, type Chain } from './usdc/chain.js';
import { DAY, MINUTE, WEBHOOK_PATH, refusedWith, signed, webhookSecret } from './helpers.js';

export type DriverKind = 'sandbox' | 'production';
/** Every driver; `RAIL_DRIVERS=sandbox` (or production) narrows a run to one. */
export const DRIVERS: DriverKind[] = process.env.RAIL_DRIVERS
  ? (process.env.RAIL_DRIVERS.split(',') as DriverKind[])
  : ['sandbox', 'production'];

export type RailGateway = TestGateway & { clock: ManualClock };
export interface Delivery { status: number; body: Record<string, any> }
export interface SignedWebhook { body: string; headers: Record<string, string> }
export type SignatureProblem = 'mismatch' | 'missing' | 'malformed' | 'stale';

export interface RailDriver {
  readonly kind: DriverKind;
  /** the gateway (available once the driver's beforeAll ran) */
  readonly t: RailGateway;
  /** the ledger entry type money funded by `fund` carries: `fund` (sandbox credit) or `topup` */
  readonly fundEntry: 'fund' | 'topup';
  readonly ids: { processor: string; chain: string; bank: string; usdcPayouts: string };

  // ---- card top-ups ----
  /** an amount the processor declines at once, and the reason it gives */
  readonly overLimit: { amountMinor: string; reason: string };
  /** the webhook route of the processor and its signature header */
  readonly webhookPath: string;
  readonly signatureHeader: string;
  /** a genuine succeeded event for the intent (at `amountMinor`, the intent's by default), or a made-up intent ref */
  succeededEvent(externalRef: string, amountMinor: string): object;
  /** signs an event as the processor does (with another secret to forge it) */
  sign(event: object, o?: { secret?: string; atMs?: number }): SignedWebhook;
  deliver(w: SignedWebhook): Promise<Delivery>;
  /** the payer pays: the processor's succeeded webhook delivered (the webhook returned for redelivery) */
  confirmTopUp(i: TopUpIntent, client?: AgentpayClient): Promise<{ res: Delivery; webhook: SignedWebhook }>;
  /** the card is declined: the processor's failed webhook delivered */
  declineTopUp(i: TopUpIntent, reason: string, client?: AgentpayClient): Promise<{ res: Delivery; webhook: SignedWebhook }>;
  /** what the message of a refused delivery says for each problem */
  readonly signatureProblems: Record<SignatureProblem, RegExp>;

  // ---- funding and destinations ----
  /** credits a wallet by the cheapest genuine route of this world (sandbox credit, or a Stripe top-up) */
  fund(client: AgentpayClient, walletId: string, amountMinor: string): Promise<void>;
  /** a bank destination this world's payout rail can pay (`ext_...`) */
  bankDestination(label?: string): string;

  // ---- USDC deposits ----
  /** sets the USDC price the gateway reads (a decimal string, e.g. '0.996') */
  setUsdcPrice(price: string): Promise<void>;
  /** makes the price feed unreadable, or readable again (undefined: this world cannot) */
  readonly setPricingDown?: (down: boolean) => Promise<void>;
  /**
   * Pays `units` of USDC to `address` and lets it confirm (sandbox: the sandbox chain's
   * deposit; production: an ERC-20 transfer, the confirmations mined, the rail job run).
   * Returns the rail transaction it made: confirmed, or held out of band.
   */
  deposit(client: AgentpayClient, walletId: string, address: string, units: string): Promise<RailTransaction>;

  // ---- payouts ----
  /** the rail reports the payout done (sandbox: its settle time passes; Stripe: paid; chain: confirmations mined), then the rail job runs */
  confirmPayout(p: Payout): Promise<void>;
  /** the bank sends a submitted bank payout back (sandbox: the return control; Stripe: the payout fails), then the rail job runs */
  returnPayout(p: Payout, reason: string, client?: AgentpayClient): Promise<void>;
  /** the return reason as the payout shows it */
  returnReason(reason: string): unknown;

  // ---- what refuses payouts ----
  /** an address the screening list names (sandbox: its built-in list; production: the OFAC sdn.csv fixture) */
  readonly sanctionedAddress: string;
  /** screening unavailable (sandbox: the control; production: the sdn.csv file gone), or back */
  setScreeningDown(down: boolean): Promise<void>;
  /**
   * The bank rail refusing the next payout outright (sandbox: the payoutsDown control; production: Stripe
   * answering 400 no_external_account for the destination's account). A 500 from Stripe is not a refusal:
   * the outcome is unknown and the payout stays submitted (test/rails/stripe/stripe.test.ts).
   */
  refuseNextBankPayout(destination: string): Promise<void>;
  /** the payout rail unreachable (sandbox: payoutsDown; production: Stripe answering 500), or back (clears a refusal too) */
  setPayoutsDown(down: boolean): Promise<void>;
  /** the rails holding `minor` cents less than the ledger owes (sandbox: the control; production: Stripe's balance lowered, as by a dispute) */
  setShortfall(minor: bigint): Promise<void>;
}

const SANDBOX_START = Date.UTC(2026, 2, 3, 10, 0, 0);
const rand = () => Math.random().toString(36).slice(2, 10);

/** '0.996' -> 99_600_000n (the aggregator's 8 decimals), without floats */
function price8(price: string): bigint {
  const [whole, frac = ''] = price.split('.');
  return BigInt(whole!) * 100_000_000n + BigInt((frac + '00000000').slice(0, 8));
}

async function post(t: RailGateway, path: string, w: SignedWebhook): Promise<Delivery> {
  const f = await t.client().http.fetcher();
  const res = await f(`${t.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...w.headers }, body: w.body });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

/** Registers the driver's start and stop with the enclosing describe, and answers it. */
export function useDriver(kind: DriverKind): RailDriver {
  const holder: { d?: RailDriver; close?: () => Promise<void> } = {};
  beforeAll(async () => {
    const made = kind === 'sandbox' ? await sandboxDriver() : await productionDriver();
    holder.d = made.driver;
    holder.close = made.close;
  }, 180_000);
  afterAll(async () => { await holder.close?.(); });
  return new Proxy({} as RailDriver, {
    get(_, key) {
      if (key === 'kind') return kind;
      if (!holder.d) throw new Error(`the ${kind} rail driver is not started yet (use it inside tests)`);
      return (holder.d as any)[key];
    },
  });
}

// ---------------------------------------------------------------- sandbox

async function sandboxDriver(): Promise<{ driver: RailDriver; close: () => Promise<void> }> {
  const clock = new ManualClock(SANDBOX_START);
  const t = Object.assign(await startTestGateway({ clock, config: { rails: { pollIntervalMs: 0 } } }), { clock });
  const runJobs = () => t.gw.services.rails.jobs.runOnce();
  const eventOf = (type: string, externalRef: string, amountMinor: string, extra: object = {}) => ({
    id: `sbx_evt_${rand()}`, type, created: Math.floor(clock.now() / 1000), data: { externalRef, amountMinor, currency: 'USD', ...extra },
  });
  const driver: RailDriver = {
    kind: 'sandbox', t, fundEntry: 'fund',
    ids: { processor: 'sandbox-processor', chain: 'sandbox-chain', bank: 'sandbox-bank', usdcPayouts: 'sandbox-chain' },
    overLimit: { amountMinor: '10000001', reason: 'amount_over_limit' },
    webhookPath: WEBHOOK_PATH,
    signatureHeader: SANDBOX_SIGNATURE_HEADER,
    succeededEvent: (externalRef, amountMinor) => eventOf('topup.succeeded', externalRef, amountMinor),
    sign: (event, o = {}) => signed(o.secret ?? webhookSecret(t), event, o.atMs ?? clock.now()),
    deliver: (w) => post(t, WEBHOOK_PATH, w),
    async confirmTopUp(i, client = t.workspace) {
      // the sandbox control makes the processor deliver its signed webhook
      const r = await client.sandbox.confirmTopUp(i.transactionId);
      return { res: { status: 200, body: { received: true, transaction: r.transaction } }, webhook: { body: r.webhook.body, headers: r.webhook.headers } };
    },
    async declineTopUp(i, reason, client = t.workspace) {
      const r = await client.sandbox.declineTopUp(i.transactionId, reason);
      return { res: { status: 200, body: { received: true, transaction: r.transaction } }, webhook: { body: r.webhook.body, headers: r.webhook.headers } };
    },
    signatureProblems: { mismatch: /does not match/, missing: /is required/, malformed: /malformed/, stale: /is stale/ },
    fund: async (client, walletId, amountMinor) => { await client.wallets.fund(walletId, amountMinor); },
    bankDestination: (label = 'bank_0001') => `ext_${label}`,
    setUsdcPrice: async (usdcPrice) => { await t.operator.sandbox.update({ usdcPrice }); },
    setPricingDown: async (pricingDown) => { await t.operator.sandbox.update({ pricingDown }); },
    async deposit(client, _walletId, address, units) {
      return client.sandbox.deposit(address, units).catch((e: any) => {
        if (e?.code !== 'DEPOSIT_HELD') throw e;
        expect(e.status).toBe(409);
        return e.details.transaction as RailTransaction;
      });
    },
    async confirmPayout(p) {
      // the sandbox rail settles on its own clock: minutes for USDC, business days for banks
      t.clock.advance(p.rail === 'usdc_base' ? 2 * MINUTE : 5 * DAY);
      await runJobs();
    },
    async returnPayout(p, reason, client) {
      const { payout } = await (client ?? t.workspace).sandbox.returnPayout(p.id, reason);
      expect(payout).toMatchObject({ id: p.id, status: 'returned', reason });
      await runJobs();
    },
    returnReason: (reason) => reason,
    sanctionedAddress: '0x000000000000000000000000000000000000BAD1',
    setScreeningDown: async (screeningDown) => { await t.operator.sandbox.update({ screeningDown }); },
    refuseNextBankPayout: async () => { await t.operator.sandbox.update({ payoutsDown: true }); },
    setPayoutsDown: async (payoutsDown) => { await t.operator.sandbox.update({ payoutsDown }); },
    setShortfall: async (minor) => { await t.operator.sandbox.update({ treasuryShortfallMinor: minor.toString() }); },
  };
  return { driver, close: () => t.close() };
}

// ---------------------------------------------------------------- production

export const STRIPE_WEBHOOK_SECRET = 'whsec_test_0123456789abcdef0123456789abcdef';
const USDC = 1_000_000n;
/** what a Stripe failure code reads as on the payout (fake-stripe's failure_message) */
const STRIPE_FAILURE = 'The bank account has been closed.';

export interface ProductionWorld { fake: FakeStripe; chain: Chain; usdc: UsdcBaseAdapter }
/** The production driver's fake Stripe and chain, for a scenario that must look at them. */
export const worldOf = (d: RailDriver): ProductionWorld => (d as any).world as ProductionWorld;

async function productionDriver(): Promise<{ driver: RailDriver; close: () => Promise<void> }> {
  const clock = new ManualClock(SANDBOX_START);
  const [fake, chain] = await Promise.all([new FakeStripe(() => clock.now()).start(), startChain()]);
  await chain.send(chain.owner, chain.token, 'mint', [chain.payer.address, 10_000_000n * USDC]);
  await chain.send(chain.owner, chain.token, 'mint', [chain.treasury, 1_000_000n * USDC]);
  // the platform's own float at each rail: USDC at the treasury, USD at Stripe (money deposited in
  // USDC may leave by bank, and the reverse; reconciliation counts them together)
  fake.balances.set('platform', 100_000_000);
  const { adapter: usdc, pricing } = usdcBaseRails({
    chainId: CHAIN_ID, usdcAddress: chain.token, confirmations: CONFIRMATIONS, treasuryKey: chain.treasuryKey, depositMnemonic: chain.depositMnemonic,
    clock, priceFeed: chain.aggregator, rpcUrl: chain.url,
  });
  const stripe = stripeAdapters({ secretKey: 'sk_test_fake', webhookSecret: STRIPE_WEBHOOK_SECRET, clock, webhookToleranceMs: 5 * MINUTE, api: fake.api, maxNetworkRetries: 0, payoutRails: ['bank_transfer', 'ach'] });
  // sanctions screening by the OFAC SDN adapter over a copy of the sdn.csv fixture (dated at the clock's start)
  const dir = mkdtempSync(join(tmpdir(), 'agentpay-sdn-'));
  const sdn = join(dir, 'sdn.csv');
  copyFileSync(new URL('./screening/sdn.csv', import.meta.url), sdn);
  utimesSync(sdn, clock.now() / 1000, clock.now() / 1000);
  const screening = new OfacSdnScreening({ path: sdn, clock, maxAgeMs: 365 * DAY });
  const adapters: RailAdapters = { providers: [...stripe, usdc], screening, pricing };
  const t = Object.assign(await startTestGateway({ clock, config: { mode: 'production', rails: { adapters, pollIntervalMs: 0, reconcileIntervalMs: 0 } } }), { clock });
  expect(t.gw.services.rails.registry.sandbox).toBeUndefined();
  const runJobs = () => t.gw.services.rails.jobs.runOnce();
  const sdk = new Stripe('sk_test_unused');
  const path = '/v1/rail/webhooks/stripe';
  const sign = (event: object, o: { secret?: string; atMs?: number } = {}): SignedWebhook => {
    const payload = JSON.stringify(event);
    const header = sdk.webhooks.generateTestHeaderString({ payload, secret: o.secret ?? STRIPE_WEBHOOK_SECRET, timestamp: Math.floor((o.atMs ?? clock.now()) / 1000) });
    return { body: payload, headers: { [STRIPE_SIGNATURE_HEADER]: header } };
  };
  const deliver = (w: SignedWebhook) => post(t, path, w);
  /** the payment intent as Stripe would describe it, for one it never made too */
  const intent = (externalRef: string) => fake.paymentIntents.get(externalRef)
    ?? { id: externalRef, object: 'payment_intent', amount: 0, currency: 'usd', status: 'requires_payment_method', metadata: {}, last_payment_error: null };
  const confirmTopUp = async (i: TopUpIntent) => {
    const webhook = sign(fake.event('payment_intent.succeeded', fake.succeed(i.externalRef)));
    const res = await deliver(webhook);
    return { res, webhook };
  };
  let taken = 0;
  const driver: RailDriver & { world: ProductionWorld } = {
    kind: 'production', t, fundEntry: 'topup', world: { fake, chain, usdc },
    ids: { processor: 'stripe', chain: usdc.info.id, bank: 'stripe-payouts', usdcPayouts: usdc.info.id },
    overLimit: { amountMinor: '100000000', reason: 'amount_too_large' },
    webhookPath: path,
    signatureHeader: STRIPE_SIGNATURE_HEADER,
    succeededEvent: (externalRef, amountMinor) => fake.event('payment_intent.succeeded', {
      ...intent(externalRef), status: 'succeeded', amount: Number(amountMinor), amount_received: Number(amountMinor),
    }),
    sign,
    deliver,
    confirmTopUp,
    async declineTopUp(i, reason) {
      const webhook = sign(fake.event('payment_intent.payment_failed', fake.decline(i.externalRef, reason)));
      return { res: await deliver(webhook), webhook };
    },
    signatureProblems: {
      mismatch: /No signatures found matching the expected signature/,
      missing: /is required/,
      malformed: /Unable to extract timestamp and signatures/,
      stale: /tolerance|is stale/,
    },
    async fund(client, walletId, amountMinor) {
      const i = await client.rail.topUp(walletId, { amountMinor });
      const { res } = await confirmTopUp(i);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    },
    bankDestination() {
      // Stripe's ids mix letter cases: the stored form is what the payout is sent to
      const account = `acct_1${Array.from({ length: 14 }, () => 'AbCdEfGhJkMnPqRsTuVwXyZ0123456789'[Math.floor(Math.random() * 32)]).join('')}`;
      fake.accounts.add(account);
      return `ext_${account}`;
    },
    setUsdcPrice: (price) => chain.setPrice(price8(price)),
    async deposit(client, walletId, address, units) {
      const before = new Set((await client.rail.transactions({ walletId, kind: 'deposit' } as never)).transactions.map((x) => x.id));
      await chain.send(chain.payer, chain.token, 'transfer', [address as `0x${string}`, BigInt(units)]);
      await chain.mine(CONFIRMATIONS - 1);
      await runJobs();
      const made = (await client.rail.transactions({ walletId, kind: 'deposit' } as never)).transactions.filter((x) => !before.has(x.id));
      expect(made, 'one deposit observed').toHaveLength(1);
      return made[0]!;
    },
    async confirmPayout(p) {
      if (p.rail === 'usdc_base') {
        await chain.mine(CONFIRMATIONS);
      } else {
        const [account, po] = p.externalRef!.split(':');
        fake.settlePayout(account!, po!, 'paid');
      }
      await runJobs();
    },
    async returnPayout(p, reason) {
      expect(p.rail).not.toBe('usdc_base');
      const [account, po] = p.externalRef!.split(':');
      fake.settlePayout(account!, po!, 'failed', reason);
      await runJobs();
    },
    returnReason: () => expect.stringContaining(STRIPE_FAILURE.replace(/\.$/, '')),
    sanctionedAddress: '0x7F367cC41522cE07553e823bf3be79A889DEbe1B', // sdn.csv entry 90001's ETH address
    async setScreeningDown(down) {
      if (down) renameSync(sdn, `${sdn}.away`);
      else if (existsSync(`${sdn}.away`)) renameSync(`${sdn}.away`, sdn);
    },
    refuseNextBankPayout: async (destination) => { fake.refuseNextPayout = destination.slice('ext_'.length); },
    setPayoutsDown: async (down) => {
      fake.down = down;
      if (!down) fake.refuseNextPayout = undefined;
    },
    async setShortfall(minor) {
      // take from Stripe's balance (a dispute, say) whatever makes all the rails together hold `minor` less than is owed
      fake.balances.set('platform', fake.balanceOf() + taken);
      taken = 0;
      if (minor === 0n) return;
      const { holdingsMinor, obligationsMinor } = (await t.operator.rail.reconcile()) as { holdingsMinor: string; obligationsMinor: string };
      taken = Number(BigInt(holdingsMinor) - BigInt(obligationsMinor) + minor);
      fake.balances.set('platform', fake.balanceOf() - taken);
    },
  };
  return {
    driver,
    close: async () => {
      await t.close();
      await Promise.all([fake.close(), chain.close()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A fresh provider funded through the driver, with destinations registered for both assets. */
export async function payeeOf(d: RailDriver, fundMinor = '10000') {
  const { t } = d;
  const s = await t.newProvider({ name: `Payee ${rand().slice(0, 5)}` });
  if (fundMinor !== '0') await d.fund(s.client, s.walletId, fundMinor);
  const bank = d.bankDestination();
  await s.client.payouts.setDestination(s.id, { destination: bank });
  const usdc = `0x${'ab'.repeat(20)}`;
  await s.client.payouts.setDestination(s.id, { destination: usdc });
  return { ...s, usdcAddress: usdc, bankDestination: bank };
}

export { refusedWith };
