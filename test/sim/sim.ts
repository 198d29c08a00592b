/**
 * The simulation of the money: a step list (./steps.ts) driven through the domain services, built
 * as the gateway builds them (src/gateway/services.ts) over a real store with an injected clock,
 * ids and the sandbox rail adapters, against a model of what every step must do. After each step
 * the store is checked against the model (./checks.ts). A step that answers otherwise than the
 * model predicts, or a check that does not hold, fails the run at that step.
 */
import { createHash } from 'node:crypto';
import { ManualClock, iso } from '../../src/core/clock.js';
import { SequentialIds } from '../../src/core/ids.js';
import { generateEd25519, signObject } from '../../src/core/ed25519.js';
import { isAppError } from '../../src/core/errors.js';
import { feeFor } from '../../src/core/money.js';
import { DEFAULT_CONFIG, type GatewayConfig } from '../../src/gateway/config.js';
import { buildServices, type Services } from '../../src/gateway/services.js';
import { MemoryMailer } from '../../src/domain/platform/mailer.js';
import type { DomainContext } from '../../src/domain/platform/context.js';
import type { Principal } from '../../src/domain/tenancy/api-keys.js';
import { createTenant, ensurePlatform, PLATFORM_REVENUE_WALLET_ID } from '../../src/domain/tenancy/tenants.js';
import { newWalletRow } from '../../src/domain/wallets/wallets.js';
import { BREAKER_THRESHOLD, IDEMPOTENCY_WINDOW_MS } from '../../src/domain/payments/config.js';
import { CLAIM_WINDOW_MS as SESSION_CLAIM_WINDOW_MS } from '../../src/domain/payments/sessions/view.js';
import type { Challenge } from '../../src/domain/payments/challenge.js';
import { FaultyStore, InjectedFault, type Plant, type Stores } from './store.js';
import { SELLERS, WALLETS, type Fault, type FailReason, type PaymentStep, type PayoutRail, type Step } from './steps.js';
import { checkStore } from './checks.js';

export class SimFailure extends Error {
  override readonly name = 'SimFailure';
}

export function fail(message: string): never {
  throw new SimFailure(message);
}

export type TxnStatus = 'authorized' | 'succeeded' | 'failed' | 'expired';

export interface MTxn {
  id: string;
  w: number;
  s: number;
  amount: bigint;
  status: TxnStatus;
  failureReason: string | null;
  authorizedAt: number;
  expiresAt: number;
  challengeExpiresAt: number;
  proof: Record<string, unknown>;
  key?: MKey;
  responseHash: string;
  receiptId?: string;
  /** a metered seller's call: the units its complete reports (0..maxUnits, so some charge less than the hold) */
  units?: bigint;
}

export interface MKey {
  name: string;
  w: number;
  s: number;
  hash: string;
  /** the key's row as the model knows it (authorize writes it, a refund removes it, the sweeper forgets it once expired) */
  row?: { txnId: string; state: 'in_progress' | 'completed'; expiresAt: number };
  /** every transaction made under the key, with when it was authorized */
  txns: string[];
}

export interface MPayout {
  id: string;
  s: number;
  amount: bigint;
  key: string;
  rail: PayoutRail;
  /** the rail's state as last learned: submitted or confirmed money is out; failed or returned came back */
  state: string;
}

export type SessionStatus = 'open' | 'closed' | 'expired';

export interface MSession {
  id: string;
  w: number;
  s: number;
  cap: bigint;
  claimed: bigint;
  /** the platform's fee on everything claimed (feeFor(claimed), the per-call rule) */
  fee: bigint;
  /** the sequence of the last voucher claimed */
  sequence: number;
  status: SessionStatus;
  claimWindowEndsAt: number;
  /** the session key that signs its vouchers */
  privateKeyPem: string;
}

export interface Model {
  balances: Map<string, { balance: bigint; held: bigint }>;
  txns: MTxn[];
  sessions: MSession[];
  keys: MKey[];
  payouts: MPayout[];
  breakers: Map<string, { count: number; paused: boolean }>;
  /** money that came in from outside (sandbox credit, top-ups, deposits) and went out (payouts not returned) */
  externalIn: bigint;
  externalOut: bigint;
  /** transactions a step touched: checked in full after it */
  touched: Set<string>;
}

interface Actor {
  walletId: string;
  workspaceId: string;
  privateKeyPem: string;
  depositAddress: string;
}

interface Seller {
  id: string;
  walletId: string;
  capabilityId: string;
  price: bigint;
  /** a metered price: price = unitPrice × maxUnits */
  metering?: { unitPrice: bigint; maxUnits: bigint };
}

export interface RunOptions {
  /** where each run's fresh store comes from (the backend's) */
  stores: Stores;
  /** a bug planted between the domain and the store (tests of the simulation itself) */
  plant?: Plant;
  /** full checks (every ledger, transaction, payout) every this many steps, and after the last; touched ones after every step */
  fullCheckEvery?: number;
  /** counts of what the calls answered are added here */
  tally?: Map<string, number>;
}

export type RunResult = { ok: true; steps: number } | { ok: false; step: number; message: string };

const CONFIG: GatewayConfig = { ...DEFAULT_CONFIG, mode: 'sandbox' };
const FEE_BPS = CONFIG.feeBps;
const principal = (tenantId: string, tenantKind: Principal['tenantKind']): Principal => ({ keyId: 'key_sim', tenantId, tenantKind, scopes: new Set() });

type Outcome<T> = { code: 'OK'; value: T } | { code: string; error: unknown };

async function outcome<T>(p: Promise<T>): Promise<Outcome<T>> {
  try {
    return { code: 'OK', value: await p };
  } catch (e) {
    if (e instanceof InjectedFault) return { code: `FAULT_${e.when}`, error: e };
    if (isAppError(e)) return { code: e.code, error: e };
    if (e instanceof SimFailure) throw e;
    return fail(`unexpected error: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
  }
}

/** What the model predicts of a call: its answer's code, and what it commits (applied when the call's transaction committed). */
interface Prediction {
  code: string;
  commit(value: unknown): Promise<void> | void;
}

const NOTHING = () => {};

/** One simulation run over a fresh store: the steps in order, the model checked after each. */
export class Simulation {
  readonly clock = new ManualClock(Date.UTC(2026, 0, 5, 9));
  readonly ids = new SequentialIds();
  store!: FaultyStore;
  private services!: Services;
  private actors: Actor[] = [];
  private sellers: Seller[] = [];
  readonly model: Model = {
    balances: new Map(), txns: [], sessions: [], keys: [], payouts: [], breakers: new Map(), externalIn: 0n, externalOut: 0n, touched: new Set(),
  };
  private keyCount = 0;
  private opens = 0;
  /** the key the sellers' session receipts are signed with (one for the simulation) */
  private readonly sellerKey = generateEd25519();
  /** how often each kind of call answered each code (what a run exercised) */
  readonly tally = new Map<string, number>();
  private dispose: () => Promise<void> = async () => {};

  constructor(private opts: RunOptions) {}

  private get ctx(): DomainContext {
    return { store: this.store, clock: this.clock, ids: this.ids };
  }

  async start(): Promise<void> {
    const opened = await this.opts.stores.open();
    this.dispose = opened.dispose;
    this.store = new FaultyStore(opened.store, this.opts.plant);
    await this.build();
    await this.setUp();
  }

  close(): Promise<void> {
    return this.dispose();
  }

  /** The services, built as the gateway builds them; again after a restart (nothing in memory survives). */
  private async build(): Promise<void> {
    const files = { read: () => undefined, write: () => {} };
    this.services = await buildServices(this.ctx, CONFIG, files, new MemoryMailer(), { kind: 'clear' });
  }

  /** Two workspaces with two agent wallets each, two verified sellers with a capability each, payout destinations, deposit addresses. */
  private async setUp(): Promise<void> {
    const { ctx } = this;
    const keys = Array.from({ length: WALLETS }, () => generateEd25519());
    const made = await this.store.inner.tx(async (r) => {
      await ensurePlatform(r, ctx);
      const workspaces = [await createTenant(r, ctx, { kind: 'workspace', name: 'ws-a' }), await createTenant(r, ctx, { kind: 'workspace', name: 'ws-b' })];
      const actors: Omit<Actor, 'depositAddress'>[] = [];
      for (let i = 0; i < WALLETS; i++) {
        const ws = workspaces[i % 2]!;
        const id = ctx.ids.next('wallet');
        await r.wallets.insert(newWalletRow({ id, tenantId: ws.id, ownerType: 'agent', ownerId: `agent-${i}`, publicKeyPem: keys[i]!.publicKeyPem }, ctx.clock.now()));
        actors.push({ walletId: id, workspaceId: ws.id, privateKeyPem: keys[i]!.privateKeyPem });
      }
      const sellers: Seller[] = [];
      for (let i = 0; i < SELLERS; i++) {
        const t = await createTenant(r, ctx, { kind: 'provider', name: `seller-${i}` });
        await r.tenants.update(t.id, { status: 'active', verified: true });
        const capabilityId = ctx.ids.next('capability');
        // one price with a fee, one too small for any (fee 0 below 34 minor units at 3%); the first is
        // metered (5 a unit, at most 250 units: 1250 a call at most), so its completes charge what they used
        const price = i === 0 ? 1_250n : 20n;
        const metering = i === 0 ? { unitPrice: 5n, maxUnits: 250n } : undefined;
        const now = ctx.clock.now();
        await r.capabilities.insert({
          id: capabilityId, providerId: t.id, name: `cap-${i}`, description: 'simulated', protocol: 'rest', priceMinor: price, currency: 'USD', category: 'sim',
          tags: [], schema: null, latencyP50Ms: null, toolName: null, status: 'active', currentVersionId: ctx.ids.next('capabilityVersion'), createdAt: now, updatedAt: now, deprecatedAt: null,
          metering: metering ? { unit: 'token', unitPriceMinor: metering.unitPrice.toString(), maxUnits: metering.maxUnits.toString() } : null,
        });
        sellers.push({ id: t.id, walletId: t.settlementWalletId!, capabilityId, price, ...(metering ? { metering } : {}) });
      }
      return { actors, sellers };
    });
    this.sellers = made.sellers;
    for (const s of this.sellers) {
      const p = principal(s.id, 'provider');
      await this.services.rails.destinations.register(p, s.id, { destination: 'ext_sim_bank_account' });
      await this.services.rails.destinations.register(p, s.id, { destination: '0x00000000000000000000000000000000000051a1' });
    }
    for (const a of made.actors) {
      const { address } = await this.services.rails.deposits.address(principal(a.workspaceId, 'workspace'), a.walletId, {});
      this.actors.push({ ...a, depositAddress: address.address });
    }
    for (const id of [...this.actors.map((a) => a.walletId), ...this.sellers.map((s) => s.walletId), PLATFORM_REVENUE_WALLET_ID]) {
      this.model.balances.set(id, { balance: 0n, held: 0n });
    }
  }

  /** Runs the steps, checking the model after each; the first failure ends the run. */
  async run(steps: Step[]): Promise<RunResult> {
    const every = this.opts.fullCheckEvery ?? 20;
    for (let i = 0; i < steps.length; i++) {
      try {
        this.model.touched.clear();
        await this.step(steps[i]!);
        await checkStore(this, (i + 1) % every === 0 || i === steps.length - 1);
      } catch (e) {
        if (e instanceof SimFailure) return { ok: false, step: i, message: e.message };
        return { ok: false, step: i, message: `crashed: ${e instanceof Error ? e.stack ?? e.message : String(e)}` };
      }
    }
    return { ok: true, steps: steps.length };
  }

  // ---- the model's helpers ----

  walletIds(): string[] {
    return [...this.model.balances.keys()];
  }

  actorWallet(w: number): string {
    return this.actors[w]!.walletId;
  }

  sellerOf(s: number): Seller {
    return this.sellers[s]!;
  }

  private bal(walletId: string) {
    return this.model.balances.get(walletId)!;
  }

  private move(walletId: string, amount: bigint, hold: bigint): void {
    const b = this.bal(walletId);
    b.balance += amount;
    b.held += hold;
  }

  breakerKey(w: number, s: number): string {
    return `${this.actorWallet(w)}|${this.sellerOf(s).id}`;
  }

  private breaker(w: number, s: number) {
    return this.model.breakers.get(this.breakerKey(w, s)) ?? { count: 0, paused: false };
  }

  private liveRow(k: MKey) {
    return k.row && k.row.expiresAt > this.clock.now() ? k.row : undefined;
  }

  private overdue(t: MTxn): boolean {
    return t.status === 'authorized' && this.clock.now() >= t.expiresAt;
  }

  /** The refund of a hold (fail, or expiry): the key is freed, nothing else moves. */
  private refund(t: MTxn, status: 'failed' | 'expired', reason: string): void {
    this.move(this.actorWallet(t.w), 0n, -t.amount);
    t.status = status;
    t.failureReason = reason;
    if (t.key?.row?.txnId === t.id) t.key.row = undefined;
    this.model.touched.add(t.id);
  }

  private expireOverdue(w?: number): void {
    for (const t of this.model.txns) if ((w === undefined || t.w === w) && this.overdue(t)) this.refund(t, 'expired', 'expired');
  }

  /** What a succeeded transaction was charged: a metered call's units × unit price, else its amount. */
  chargedOf(t: MTxn): bigint {
    const m = this.sellerOf(t.s).metering;
    return m && t.units !== undefined ? t.units * m.unitPrice : t.amount;
  }

  private succeed(t: MTxn): void {
    const charged = this.chargedOf(t);
    const fee = feeFor(charged, FEE_BPS);
    // the capture takes the charge, the release the rest of the hold
    this.move(this.actorWallet(t.w), -charged, -t.amount);
    this.move(this.sellerOf(t.s).walletId, charged - fee, 0n);
    this.move(PLATFORM_REVENUE_WALLET_ID, fee, 0n);
    t.status = 'succeeded';
    const b = this.breaker(t.w, t.s);
    this.model.breakers.set(this.breakerKey(t.w, t.s), { count: 0, paused: b.paused });
    if (t.key?.row?.txnId === t.id) t.key.row.state = 'completed';
    this.model.touched.add(t.id);
  }

  // ---- steps ----

  private async step(s: Step): Promise<void> {
    switch (s.op) {
      case 'authorize': case 'complete': case 'fail': case 'again': case 'replayProof': case 'retryKey':
        return this.payment(s, undefined);
      case 'concurrent': return this.concurrent(s.calls);
      case 'race': return this.race(s.t, s.failFirst);
      case 'sweep': return this.sweep(s.fault);
      case 'clock': this.clock.advance(s.ms); return;
      case 'resume': return this.resume(s.w, s.s);
      case 'fund': return this.fund(s.w, s.amount, s.fault);
      case 'topUp': return this.topUp(s.w, s.amount, s.outcome, s.duplicate);
      case 'deposit': return this.deposit(s.w, s.units);
      case 'payout': return this.payout(s.s, s.amount, s.rail, s.fault);
      case 'payoutAgain': return this.payoutAgain(s.p);
      case 'settlePayout': return this.settlePayout(s.p, s.outcome);
      case 'railJobs': {
        const got = await outcome(this.services.rails.jobs.runOnce());
        if (got.code !== 'OK') fail(`the rail job failed: ${got.code}`);
        return this.learnPayouts();
      }
      case 'restart': return this.build();
      case 'sessionOpen': return this.sessionOpen(s.w, s.s, s.cap, s.minutes);
      case 'sessionClaim': return this.sessionClaim(s.k, s.add, s.stale, s.fault);
      case 'sessionClose': return this.sessionClose(s.k, s.fault);
    }
  }

  /** Runs one call under an armed fault and holds its answer to the prediction. */
  private async expect(what: string, pred: Prediction, call: () => Promise<unknown>, fault: Fault | undefined, learn?: () => Promise<unknown>): Promise<unknown> {
    this.store.arm(fault);
    const got = await outcome(call());
    this.store.arm(undefined);
    this.count(what, got.code);
    if (got.code === 'FAULT_before') return undefined;
    if (got.code === 'FAULT_after') {
      await pred.commit(learn ? await learn() : undefined);
      return undefined;
    }
    if (got.code !== pred.code) {
      const detail = 'error' in got && isAppError(got.error) ? `: ${got.error.message}` : '';
      fail(`${what} answered ${got.code}${detail}, the model expected ${pred.code}`);
    }
    const value = 'value' in got ? got.value : undefined;
    await pred.commit(value);
    return value;
  }

  private count(what: string, code: string): void {
    const k = `${what.split(' ')[0]!.replace(/:$/, '')} ${code}`;
    this.tally.set(k, (this.tally.get(k) ?? 0) + 1);
  }

  private open(scopeW: number | undefined): MTxn[] {
    return this.model.txns.filter((t) => t.status === 'authorized' && (scopeW === undefined || t.w === scopeW));
  }

  private nth<T>(xs: T[], k: number): T | undefined {
    return xs.length ? xs[k % xs.length] : undefined;
  }

  /** A payment call: predicted, started, its answer checked (`await` the result); `scopeW` keeps it to one buyer wallet. */
  private async payment(s: PaymentStep, scopeW: number | undefined, fault: Fault | undefined = 'fault' in s ? s.fault : undefined): Promise<void> {
    const run = await this.startPayment(s, scopeW, fault);
    if (run) await run();
  }

  /** Predicts a payment call now (against the model as it is) and returns what starts it and checks its answer. */
  private async startPayment(s: PaymentStep, scopeW: number | undefined, fault: Fault | undefined): Promise<(() => Promise<void>) | undefined> {
    switch (s.op) {
      case 'authorize': {
        const w = scopeW ?? s.w;
        const key = s.key ? this.newKey(w, s.s) : undefined;
        return this.startAuthorize(w, s.s, key, fault);
      }
      case 'retryKey': {
        const k = this.nth(scopeW === undefined ? this.model.keys : this.model.keys.filter((x) => x.w === scopeW), s.k);
        return k ? this.startAuthorize(k.w, k.s, k, fault) : undefined;
      }
      case 'complete': {
        const t = this.nth(this.open(scopeW), s.t);
        return t ? this.startComplete(t, fault) : undefined;
      }
      case 'fail': {
        const t = this.nth(this.open(scopeW), s.t);
        return t ? this.startFail(t, s.reason, fault) : undefined;
      }
      case 'again': {
        const done = this.model.txns.filter((t) => (t.status === 'succeeded' || (t.status === 'failed' && t.failureReason !== 'expired')) && (scopeW === undefined || t.w === scopeW));
        const t = this.nth(done, s.t);
        if (!t) return undefined;
        return t.status === 'succeeded' ? this.startComplete(t, undefined) : this.startFail(t, t.failureReason as FailReason, undefined);
      }
      case 'replayProof': {
        const t = this.nth(this.model.txns.filter((x) => scopeW === undefined || x.w === scopeW), s.t);
        return t ? this.startReplayProof(t) : undefined;
      }
    }
  }

  private newKey(w: number, s: number): MKey {
    const name = `idem-${++this.keyCount}`;
    const k: MKey = { name, w, s, hash: createHash('sha256').update(name).digest('hex'), txns: [] };
    this.model.keys.push(k);
    return k;
  }

  private async proofFor(w: number, s: number): Promise<{ proof: Record<string, unknown>; challenge: Challenge }> {
    const seller = this.sellerOf(s);
    const challenge = await this.services.payments.challenge(principal(seller.id, 'provider'), seller.capabilityId);
    const a = this.actors[w]!;
    const unsigned = { version: 1, challenge, walletId: a.walletId, signedAt: iso(this.clock.now()) };
    return { proof: { ...unsigned, signature: signObject(a.privateKeyPem, unsigned) }, challenge };
  }

  /** What authorize answers for a key whose row is live: the replay, or in progress. */
  private keyAnswer(k: MKey): Prediction | undefined {
    const row = this.liveRow(k);
    if (!row) return undefined;
    if (row.state === 'in_progress') return { code: 'IDEMPOTENCY_IN_PROGRESS', commit: NOTHING };
    return {
      code: 'OK',
      commit: (v) => {
        const r = v as { status?: string; transactionId?: string } | undefined;
        if (r && (r.status !== 'replayed' || r.transactionId !== row.txnId)) fail(`a retry with key ${k.name} answered ${r.status} ${r.transactionId}, not the replay of ${row.txnId}`);
      },
    };
  }

  private async startAuthorize(w: number, s: number, key: MKey | undefined, fault: Fault | undefined) {
    const seller = this.sellerOf(s);
    const { proof, challenge } = await this.proofFor(w, s);
    const walletId = this.actorWallet(w);
    const amount = seller.price;
    const now = this.clock.now();
    const pred: Prediction = (key && this.keyAnswer(key)) ?? (() => {
      if (this.breaker(w, s).paused) return { code: 'WALLET_PROVIDER_PAUSED', commit: NOTHING };
      const b = this.bal(walletId);
      const overdue = this.model.txns.filter((t) => t.w === w && this.overdue(t));
      const freed = overdue.reduce((n, t) => n + t.amount, 0n);
      const available = b.balance - b.held;
      if (available < amount && available + freed < amount) return { code: 'INSUFFICIENT_FUNDS', commit: NOTHING };
      return {
        code: 'OK',
        commit: async (v) => {
          const id = (v as { transactionId?: string; status?: string } | undefined)?.transactionId;
          if (v && (v as { status: string }).status !== 'authorized') fail(`authorize answered ${(v as { status: string }).status}, the model expected authorized`);
          if (available < amount) this.expireOverdue(w);
          const txnId = id ?? (await this.store.inner.read((r) => r.transactions.byNonce(challenge.nonce)))?.id;
          if (!txnId) fail(`authorize committed but no transaction has nonce ${challenge.nonce}`);
          this.move(walletId, 0n, amount);
          const t: MTxn = {
            id: txnId, w, s, amount, status: 'authorized', failureReason: null, authorizedAt: now, expiresAt: now + CONFIG.releaseUnsettledAfterMs,
            challengeExpiresAt: now + CONFIG.challengeTtlMs, proof, responseHash: `sha256:${createHash('sha256').update(txnId).digest('hex')}`,
            ...(key ? { key } : {}),
            // a metered seller's call reports 0..maxUnits units at complete, spread over the calls of the seed
            ...(this.sellerOf(s).metering ? { units: BigInt((this.model.txns.length * 97) % Number(this.sellerOf(s).metering!.maxUnits + 1n)) } : {}),
          };
          this.model.txns.push(t);
          this.model.touched.add(txnId);
          if (key) {
            key.row = { txnId, state: 'in_progress', expiresAt: now + IDEMPOTENCY_WINDOW_MS };
            key.txns.push(txnId);
          }
        },
      };
    })();
    const p = principal(seller.id, 'provider');
    const idem = key ? { idempotencyKey: key.name, requestHash: key.hash } : {};
    return async () => void (await this.expect(`authorize of ${walletId} for ${seller.capabilityId}${key ? ` with key ${key.name}` : ''}`, pred,
      () => this.services.payments.authorize(p, { capabilityId: seller.capabilityId, payment: proof, ...idem }), fault));
  }

  private startReplayProof(t: MTxn) {
    const seller = this.sellerOf(t.s);
    const now = this.clock.now();
    const keyed = t.key ? this.keyAnswer(t.key) : undefined;
    const pred: Prediction = keyed ?? { code: now >= t.challengeExpiresAt ? 'CHALLENGE_EXPIRED' : 'REPLAY_DETECTED', commit: NOTHING };
    const idem = t.key ? { idempotencyKey: t.key.name, requestHash: t.key.hash } : {};
    return async () => void (await this.expect(`replayProof: the proof of ${t.id} sent again`, pred,
      () => this.services.payments.authorize(principal(seller.id, 'provider'), { capabilityId: seller.capabilityId, payment: t.proof, ...idem }), undefined));
  }

  private predictComplete(t: MTxn): Prediction {
    if (t.status === 'succeeded') return { code: 'OK', commit: (v) => this.sameReceipt(t, v) };
    if (t.status !== 'authorized') return { code: 'CONFLICT', commit: NOTHING };
    if (this.overdue(t)) return { code: 'CONFLICT', commit: () => this.refund(t, 'expired', 'expired') };
    return { code: 'OK', commit: (v) => { this.succeed(t); this.noteReceipt(t, v); } };
  }

  private predictFail(t: MTxn, reason: FailReason): Prediction {
    if (t.status === 'failed' && t.failureReason === reason) return { code: 'OK', commit: (v) => this.sameReceipt(t, v) };
    if (t.status !== 'authorized') return { code: 'CONFLICT', commit: NOTHING };
    if (this.overdue(t)) return { code: 'CONFLICT', commit: () => this.refund(t, 'expired', 'expired') };
    return {
      code: 'OK',
      commit: (v) => {
        this.refund(t, 'failed', reason);
        this.noteReceipt(t, v);
        if (reason === 'provider_error') {
          const b = this.breaker(t.w, t.s);
          const count = b.count + 1;
          this.model.breakers.set(this.breakerKey(t.w, t.s), { count, paused: b.paused || count >= BREAKER_THRESHOLD });
        }
      },
    };
  }

  private noteReceipt(t: MTxn, v: unknown): void {
    const id = (v as { id?: string } | undefined)?.id;
    if (id) t.receiptId = id;
  }

  private sameReceipt(t: MTxn, v: unknown): void {
    const id = (v as { id?: string } | undefined)?.id;
    if (t.receiptId && id && id !== t.receiptId) fail(`a repeated resolution of ${t.id} answered receipt ${id}, the first answered ${t.receiptId}`);
    if (id) t.receiptId = id;
  }

  private startComplete(t: MTxn, fault: Fault | undefined) {
    const pred = this.predictComplete(t);
    const p = principal(this.sellerOf(t.s).id, 'provider');
    const units = t.units !== undefined ? { units: t.units.toString() } : {};
    return async () => void (await this.expect(`complete of ${t.id}`, pred, () => this.services.payments.complete(p, { transactionId: t.id, responseHash: t.responseHash, ...units }), fault));
  }

  private startFail(t: MTxn, reason: FailReason, fault: Fault | undefined) {
    const pred = this.predictFail(t, reason);
    const p = principal(this.sellerOf(t.s).id, 'provider');
    return async () => void (await this.expect(`fail (${reason}) of ${t.id}`, pred, () => this.services.payments.fail(p, { transactionId: t.id, reason }), fault));
  }

  /** Calls on distinct buyer wallets in flight at once (no faults: which call's transaction an armed fault hits would depend on timing). */
  private async concurrent(calls: { w: number; call: PaymentStep }[]): Promise<void> {
    const runs: (() => Promise<void>)[] = [];
    const used = new Set<number>();
    for (const { w, call } of calls) {
      if (used.has(w)) continue;
      used.add(w);
      const run = await this.startPayment(call, w, undefined);
      if (run) runs.push(run);
    }
    const results = await Promise.allSettled(runs.map((r) => r()));
    for (const r of results) if (r.status === 'rejected') throw r.reason;
  }

  /** A complete and a fail of one open transaction in flight at once: exactly one wins (or both find it expired). */
  private async race(k: number, failFirst: boolean): Promise<void> {
    const t = this.nth(this.open(undefined), k);
    if (!t) return;
    const p = principal(this.sellerOf(t.s).id, 'provider');
    const complete = () => outcome(this.services.payments.complete(p, { transactionId: t.id, responseHash: t.responseHash, ...(t.units !== undefined ? { units: t.units.toString() } : {}) }));
    const failing = () => outcome(this.services.payments.fail(p, { transactionId: t.id, reason: 'provider_error' }));
    const overdue = this.overdue(t);
    const completePred = this.predictComplete(t);
    const failPred = this.predictFail(t, 'provider_error');
    const [c, f] = failFirst ? (([a, b]) => [b, a])(await Promise.all([failing(), complete()])) : await Promise.all([complete(), failing()]);
    const codes = `complete ${c!.code}, fail ${f!.code}`;
    this.count('race', codes);
    if (overdue) {
      if (c!.code !== 'CONFLICT' || f!.code !== 'CONFLICT') fail(`racing on the overdue ${t.id}: ${codes}; both should find it expired`);
      this.refund(t, 'expired', 'expired');
      return;
    }
    if (c!.code === 'OK' && f!.code === 'CONFLICT') return void completePred.commit((c as { value: unknown }).value);
    if (f!.code === 'OK' && c!.code === 'CONFLICT') return void failPred.commit((f as { value: unknown }).value);
    fail(`racing complete and fail on ${t.id}: ${codes}; exactly one should win`);
  }

  private async sweep(fault: Fault | undefined): Promise<void> {
    const due = this.model.txns.filter((t) => this.overdue(t));
    const pred: Prediction = {
      code: 'OK',
      commit: (v) => {
        if (typeof v === 'number' && v !== due.length) fail(`the sweeper expired ${v} transactions, the model ${due.length}`);
        for (const t of due) this.refund(t, 'expired', 'expired');
        // the sessions whose claim window ended are released last, by a sweep that got that far (not one that died after its first commit)
        if (typeof v === 'number') {
          for (const m of this.model.sessions) if (m.status === 'open' && this.clock.now() >= m.claimWindowEndsAt) this.releaseSession(m, 'expired');
        }
      },
    };
    await this.expect('sweep: the expiry sweep', pred, () => this.services.sweeper.sweepOnce(), fault);
  }

  private async resume(w: number, s: number): Promise<void> {
    const a = this.actors[w]!;
    const got = await outcome(this.services.breakers.resume(principal(a.workspaceId, 'workspace'), a.walletId, this.sellerOf(s).id));
    if (got.code !== 'OK') fail(`resume answered ${got.code}`);
    this.model.breakers.set(this.breakerKey(w, s), { count: 0, paused: false });
  }

  private async fund(w: number, amount: number, fault: Fault | undefined): Promise<void> {
    const a = this.actors[w]!;
    const pred: Prediction = { code: 'OK', commit: () => { this.move(a.walletId, BigInt(amount), 0n); this.model.externalIn += BigInt(amount); } };
    await this.expect(`fund: sandbox credit of ${amount} to ${a.walletId}`, pred,
      () => this.services.wallets.fund(principal(a.workspaceId, 'workspace'), a.walletId, { amountMinor: String(amount) }), fault);
  }

  private async topUp(w: number, amount: number, settle: 'succeeded' | 'declined', duplicate: boolean): Promise<void> {
    const a = this.actors[w]!;
    const p = principal(a.workspaceId, 'workspace');
    const created = await outcome(this.services.rails.topUps.create(p, a.walletId, { amountMinor: String(amount) }));
    if (created.code !== 'OK') fail(`top-up of ${amount} answered ${created.code}`);
    const intent = (created as unknown as { value: { intent: { transactionId: string; status: string } } }).value.intent;
    const id = intent.transactionId;
    if (intent.status === 'declined') return; // over the sandbox processor's limit: nothing to settle
    if (intent.status !== 'pending') fail(`a new top-up is ${intent.status}, not pending`);
    const settled = await outcome(this.services.rails.sandbox.settleTopUp(p, id, settle, settle === 'declined' ? 'card_declined' : undefined));
    if (settled.code !== 'OK') fail(`settling top-up ${id} answered ${settled.code}`);
    const { transaction, webhook } = (settled as { value: Awaited<ReturnType<Services['rails']['sandbox']['settleTopUp']>> }).value;
    const want = settle === 'succeeded' ? 'confirmed' : 'declined';
    if (transaction.state !== want) fail(`top-up ${id} is ${transaction.state} after the processor's ${settle}`);
    if (settle === 'succeeded') {
      this.move(a.walletId, BigInt(amount), 0n);
      this.model.externalIn += BigInt(amount);
    }
    if (duplicate) {
      const again = await outcome(this.services.rails.topUps.handleWebhook('sandbox-processor', webhook.body, webhook.headers));
      if (again.code !== 'DUPLICATE_EXTERNAL_REF') fail(`a duplicate webhook of top-up ${id} answered ${again.code}, not DUPLICATE_EXTERNAL_REF`);
    }
  }

  private async deposit(w: number, units: number): Promise<void> {
    const a = this.actors[w]!;
    const got = await outcome(this.services.rails.sandbox.deposit(principal(a.workspaceId, 'workspace'), { address: a.depositAddress, amountMinor: String(units) }));
    if (got.code !== 'OK') fail(`a deposit of ${units} USDC units answered ${got.code}`);
    const t = (got as { value: { transaction: { state: string; amountMinor?: string; usdAmountMinor?: string } } }).value.transaction;
    const usd = BigInt(units) / 10_000n; // USDC at 1.0: 10^6 units a dollar, 100 minor units a dollar
    if (t.state !== 'confirmed') fail(`a deposit at price 1.0 is ${t.state}, not confirmed`);
    this.move(a.walletId, usd, 0n);
    this.model.externalIn += usd;
  }

  private payoutKey = 0;

  private async payout(s: number, amount: number, rail: PayoutRail, fault: Fault | undefined): Promise<void> {
    const seller = this.sellerOf(s);
    const p = principal(seller.id, 'provider');
    const key = `payout-${++this.payoutKey}`;
    const b = this.bal(seller.walletId);
    const amt = BigInt(amount);
    const pred: Prediction = b.balance - b.held < amt ? { code: 'INSUFFICIENT_FUNDS', commit: NOTHING } : {
      code: 'OK',
      commit: (v) => {
        const payout = (v as { payout: { id: string; status: string } }).payout;
        this.move(seller.walletId, -amt, 0n);
        this.model.externalOut += amt;
        const m: MPayout = { id: payout.id, s, amount: amt, key, rail, state: 'submitted' };
        this.model.payouts.push(m);
        this.learnPayout(m, payout.status);
      },
    };
    const learn = async () => ({ payout: await this.store.inner.read(async (r) => {
      const row = await r.railTransactions.byIdempotencyKey(seller.id, key);
      if (!row) fail(`payout ${key} committed but no payout has its idempotency key`);
      return { id: row.id, status: row.state };
    }) });
    await this.expect(`payout of ${amount} on ${rail} from ${seller.walletId}`, pred,
      () => this.services.rails.payouts.create(p, { walletId: seller.walletId, amountMinor: String(amount), rail }, key), fault, learn);
  }

  private async payoutAgain(k: number): Promise<void> {
    const m = this.nth(this.model.payouts, k);
    if (!m) return;
    const seller = this.sellerOf(m.s);
    const got = await outcome(this.services.rails.payouts.create(principal(seller.id, 'provider'), { walletId: seller.walletId, amountMinor: m.amount.toString(), rail: m.rail }, m.key));
    if (m.state === 'failed') {
      // a payout refused by its rail frees its key: the request makes a new payout (or is refused as any new one)
      return fail(`unexpected: payout ${m.id} failed; the simulation does not refuse payouts at the rail`);
    }
    if (got.code !== 'OK') fail(`payout ${m.key} sent again answered ${got.code}`);
    const v = (got as { value: { payout: { id: string }; replayed: boolean } }).value;
    if (!v.replayed || v.payout.id !== m.id) fail(`payout ${m.key} sent again made ${v.payout.id} (replayed ${v.replayed}), not a replay of ${m.id}`);
  }

  private async settlePayout(k: number, settle: 'confirmed' | 'returned'): Promise<void> {
    const m = this.nth(this.model.payouts, k);
    if (!m) return;
    const got = await outcome(this.services.rails.sandbox.settlePayout(principal(this.sellerOf(m.s).id, 'provider'), m.id, settle, settle === 'returned' ? 'account_closed' : undefined));
    if (got.code !== 'OK' && got.code !== 'CONFLICT') fail(`settling payout ${m.id} as ${settle} answered ${got.code}`);
    // settling again as it was settled answers as before; a submitted payout whose rail time
    // passed is confirmed first (then a return is a CONFLICT)
    if (got.code === 'OK' && m.state !== 'submitted' && m.state !== settle) fail(`payout ${m.id} was ${m.state}, yet the rail could settle it as ${settle}`);
    await this.learnPayouts();
    if (got.code === 'OK' && m.state !== (got as { value: { payout: { status: string } } }).value.payout.status) fail(`payout ${m.id} answered ${settle} but is ${m.state}`);
  }

  /** The rail's side of every payout, as its row now says: money of a returned or failed payout is back in the seller's wallet. */
  private async learnPayouts(): Promise<void> {
    const states = await this.store.inner.read(async (r) => Promise.all(this.model.payouts.map(async (m) => (await r.railTransactions.get(m.id))?.state)));
    this.model.payouts.forEach((m, i) => this.learnPayout(m, states[i] ?? 'missing'));
  }

  // ---- payment sessions ----

  /** The rest of a session's cap back to the buyer; the session ended. */
  private releaseSession(m: MSession, status: 'closed' | 'expired'): void {
    this.move(this.actorWallet(m.w), 0n, -(m.cap - m.claimed));
    m.status = status;
    this.model.touched.add(m.id);
  }

  private async sessionOpen(w: number, s: number, cap: number, minutes: number): Promise<void> {
    const a = this.actors[w]!;
    const seller = this.sellerOf(s);
    const amount = BigInt(cap);
    const now = this.clock.now();
    const expiresAt = now + minutes * 60_000;
    const sessionKey = generateEd25519();
    const nonce = `sim-open-${this.model.sessions.length}-${now}-${++this.opens}`;
    const unsigned = {
      version: 1 as const, type: 'session.open' as const, walletId: a.walletId, providerId: seller.id, capabilityId: seller.capabilityId, capMinor: amount.toString(), currency: 'USD',
      expiresAt: iso(expiresAt), sessionPublicKey: sessionKey.publicKeyPem, nonce, signedAt: iso(now),
    };
    const open = { ...unsigned, signature: signObject(a.privateKeyPem, unsigned) };
    const pred: Prediction = (() => {
      if (this.breaker(w, s).paused) return { code: 'WALLET_PROVIDER_PAUSED', commit: NOTHING };
      const b = this.bal(a.walletId);
      const freed = this.model.txns.filter((t) => t.w === w && this.overdue(t)).reduce((n, t) => n + t.amount, 0n);
      const available = b.balance - b.held;
      if (available < amount && (freed === 0n || available + freed < amount)) return { code: 'INSUFFICIENT_FUNDS', commit: NOTHING };
      return {
        code: 'OK',
        commit: (v) => {
          const id = (v as { session?: { id?: string; status?: string; capMinor?: string } } | undefined)?.session;
          if (!id?.id || id.status !== 'open' || id.capMinor !== amount.toString()) fail(`a session open answered ${JSON.stringify(id)}, the model expected an open session of ${amount}`);
          if (available < amount) this.expireOverdue(w);
          this.move(a.walletId, 0n, amount);
          this.model.sessions.push({
            id: id.id, w, s, cap: amount, claimed: 0n, fee: 0n, sequence: 0, status: 'open', claimWindowEndsAt: expiresAt + SESSION_CLAIM_WINDOW_MS, privateKeyPem: sessionKey.privateKeyPem,
          });
          this.model.touched.add(id.id);
        },
      };
    })();
    await this.expect(`sessionOpen: ${a.walletId} with ${seller.id} for ${amount}`, pred,
      () => this.services.sessions.open(principal(seller.id, 'provider'), { open, sellerPublicKey: this.sellerKey.publicKeyPem }), undefined);
  }

  private async sessionClaim(k: number, add: number, stale: boolean, fault: Fault | undefined): Promise<void> {
    const m = this.nth(this.model.sessions, k);
    if (!m) return;
    const seller = this.sellerOf(m.s);
    const cumulative = stale && m.claimed > 0n ? m.claimed - 1n : m.claimed + BigInt(add === 0 && m.claimed === 0n ? 1 : add);
    const sequence = cumulative === m.claimed ? m.sequence : m.sequence + 1;
    const unsigned = { sessionId: m.id, cumulativeMinor: cumulative.toString(), sequence, requestHash: `sha256:${createHash('sha256').update(`${m.id}:${sequence}`).digest('hex')}` };
    const voucher = { ...unsigned, signature: signObject(m.privateKeyPem, unsigned) };
    const pred: Prediction = (() => {
      if (cumulative > m.cap) return { code: 'VOUCHER_ABOVE_CAP', commit: NOTHING };
      if (cumulative === m.claimed) return { code: 'OK', commit: (v) => { if (v && (v as { status: string }).status !== 'unchanged') fail(`a claim of ${m.id} at what it claimed answered ${(v as { status: string }).status}`); } };
      if (cumulative < m.claimed) return { code: 'VOUCHER_STALE', commit: NOTHING };
      if (m.status !== 'open') return { code: 'SESSION_CLOSED', commit: NOTHING };
      if (this.clock.now() >= m.claimWindowEndsAt) return { code: 'SESSION_EXPIRED', commit: NOTHING };
      return {
        code: 'OK',
        commit: (v) => {
          if (v && (v as { status: string }).status !== 'claimed') fail(`a claim of ${m.id} up to ${cumulative} answered ${(v as { status: string }).status}`);
          const amount = cumulative - m.claimed;
          const fee = feeFor(cumulative, FEE_BPS) - m.fee;
          this.move(this.actorWallet(m.w), -amount, -amount);
          this.move(seller.walletId, amount - fee, 0n);
          this.move(PLATFORM_REVENUE_WALLET_ID, fee, 0n);
          m.claimed = cumulative;
          m.fee += fee;
          m.sequence = sequence;
          this.model.touched.add(m.id);
        },
      };
    })();
    await this.expect(`sessionClaim: ${m.id} up to ${cumulative}`, pred,
      () => this.services.sessions.claim(principal(seller.id, 'provider'), { sessionId: m.id, voucher }), fault);
  }

  private async sessionClose(k: number, fault: Fault | undefined): Promise<void> {
    const m = this.nth(this.model.sessions, k);
    if (!m) return;
    const pred: Prediction = { code: 'OK', commit: () => { if (m.status === 'open') this.releaseSession(m, 'closed'); } };
    await this.expect(`sessionClose: ${m.id}`, pred, () => this.services.sessions.close(principal(this.sellerOf(m.s).id, 'provider'), m.id), fault);
  }

  private learnPayout(m: MPayout, state: string): void {
    const out = (x: string) => x === 'submitted' || x === 'confirmed';
    if (!out(state) && state !== 'failed' && state !== 'returned') fail(`payout ${m.id} is ${state}`);
    if (out(m.state) && !out(state)) {
      this.move(this.sellerOf(m.s).walletId, m.amount, 0n);
      this.model.externalOut -= m.amount;
    } else if (!out(m.state) && out(state)) {
      fail(`payout ${m.id} went from ${m.state} back to ${state}`);
    } else if (m.state === 'confirmed' && state !== 'confirmed') {
      fail(`payout ${m.id} was confirmed and is now ${state}`);
    }
    m.state = state;
  }
}

/** One seed: a fresh store, the steps, the model. */
export async function runSteps(steps: Step[], opts: RunOptions): Promise<RunResult> {
  const sim = new Simulation(opts);
  await sim.start();
  try {
    return await sim.run(steps);
  } finally {
    for (const [k, n] of sim.tally) opts.tally?.set(k, (opts.tally.get(k) ?? 0) + n);
    await sim.close();
  }
}
