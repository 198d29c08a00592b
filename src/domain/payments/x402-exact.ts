/**
 * x402's `exact` scheme on EVM, with the gateway as the facilitator of its sellers: a stock x402
 * client signs an EIP-3009 `transferWithAuthorization` of USDC to the platform's receiving
 * address; the seller asks the gateway to verify it before its handler runs (`verify`), and to
 * settle it once the handler succeeded (`settle`) or to let it go when it failed (`release`).
 *
 *   verify   the checks of x402's facilitator (network, recipient, value, validity window with a
 *            margin for settlement, signature, nonce unused on chain, payer's balance), then the
 *            authorization is reserved: a row unique by (network, token, nonce), so the same
 *            authorization pays once whichever gateway instance sees it
 *   settle   transferWithAuthorization on chain (the chain port waits the confirmations), then in
 *            ONE database transaction: the on-chain amount credited to the platform's x402
 *            holding wallet, and the sale completed exactly as any other (completeTransaction's
 *            `succeed`: the seller's share, the platform fee, the platform-signed receipt)
 *   release  the handler failed: nothing is submitted and the buyer keeps its money
 *
 * A settlement the chain refuses after the handler ran is tried `settleAttempts` times, then the
 * authorization is recorded `failed` (with the error) and alerted (`x402.settlement_failed`, stage
 * `settle`, to the seller and the operator, in the same database transaction): the seller delivered
 * and was not paid, the risk x402's own `exact` flow leaves with the seller too (docs/protocol.md).
 *
 * The settlement duty (`runSettlementDuty`, a fleet duty: one instance at a time) takes up what the
 * route left: `failed` rows, and `settling` rows untouched for `staleSettlingMs` (a crash between the
 * claim and the record). It asks the chain first (`lookup`), so nothing is sent twice: used by a
 * transfer of the authorization, the sale is recorded once (the row's transition from `settling` is
 * in the sale's transaction); unused and still valid, it is sent again; expired unused, or used
 * without a transfer to the receiving address, the row becomes `expired` and is alerted (stage
 * `retry`). It also reconciles `settled` rows against the chain once their transaction has its
 * confirmations (`reconciledAt`); one not on chain as recorded is alerted to the operator (stage
 * `reconcile`).
 *
 * Refusals are `402 PAYMENT_REQUIRED` whose details.reason is x402's error reason
 * (invalid_exact_evm_signature, invalid_exact_evm_insufficient_balance, …).
 */
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import {
  ExactAuthorization, ExactPaymentPayload, ExactSignature, X402PaymentPayload,
  type ExactOffer, type ExactSettled as ContractExactSettled, type ExactVerified,
} from 'agentpay-sdk/contract';
import { AppError, notFound, validationError } from '../../core/errors.js';
import type { Repos } from '../../store/store.js';
import type { Transaction } from '../../store/repos/payments.js';
import type { X402Authorization } from '../../store/repos/x402.js';
import { isUniqueViolation, storeError } from '../../store/errors.js';
import { iso } from '../../core/clock.js';
import type { Principal } from '../tenancy/api-keys.js';
import { recordEvent } from '../platform/events.js';
import { Periodic } from '../platform/periodic.js';
import { OPERATOR_TENANT_ID } from '../tenancy/tenants.js';
import { newWalletRow } from '../wallets/wallets.js';
import { post } from '../wallets/ledger.js';
import { requireProvider, type PaymentDeps } from './deps.js';
import { succeed } from './complete.js';
import { receiptView, type ReceiptView } from './receipts.js';

/** The platform wallet that holds what x402 `exact` payments bring in on chain, before the sale moves it on. */
export const PLATFORM_X402_WALLET_ID = 'wal_platform_x402';

// EIP-3009's authorization as x402's `exact` payload carries it (decimal strings, 0x hex): the contract's
export type { ExactAuthorization };

/** The chain side (src/rails/usdc/exact.ts implements it with viem). */
export interface ExactChain {
  /** CAIP-2, eip155:<chain id> */
  readonly network: string;
  /** the token (USDC) */
  readonly asset: string;
  readonly decimals: number;
  /** the platform's receiving address (the treasury's) */
  readonly payTo: string;
  /** the token's EIP-712 domain name and version (USDC: "USD Coin", "2") */
  readonly eip712: { name: string; version: string };
  /** whether `signature` is `from`'s EIP-712 signature of the authorization */
  verifySignature(a: ExactAuthorization, signature: string): Promise<boolean>;
  /** the latest block's timestamp, seconds (what the token checks validAfter/validBefore against) */
  chainTime(): Promise<number>;
  authorizationUsed(from: string, nonce: string): Promise<boolean>;
  balanceOf(owner: string): Promise<bigint>;
  /**
   * submits transferWithAuthorization and waits the confirmations; throws if it reverted or could not be sent.
   * `onSubmitted` gets the transaction's hash once it is sent, before the confirmations.
   */
  settle(a: ExactAuthorization, signature: string, onSubmitted?: (txHash: string) => Promise<void>): Promise<{ txHash: string }>;
  /** what the chain says about the authorization; `txHash`: the transaction last sent for it, if any */
  lookup(a: ExactAuthorization, txHash: string | null): Promise<ExactOnChain>;
}

/** An authorization as the chain sees it (ExactChain.lookup). */
export type ExactOnChain =
  /** the nonce is unused; `pending`: the transaction sent for it is not mined yet (send no other) */
  | { state: 'unused'; pending: string | null }
  /** used by `txHash`, a transaction that moved exactly the authorized value to the payee; `confirmed`: it has the confirmations */
  | { state: 'used'; txHash: string; confirmed: boolean }
  /** the nonce is used, but by no transfer of this authorization found (cancelled by the payer, or used another way) */
  | { state: 'used_elsewhere' };

export interface ExactSettings {
  /** validBefore must be at least this far ahead of the chain's time (seconds), to leave time to settle */
  validityMarginSeconds?: number;
  /** tries of a settlement before it is recorded failed */
  settleAttempts?: number;
  /** a `settling` row untouched this long (ms, on the gateway's clock) was left by a crash: the settlement duty takes it up; default 10 minutes */
  staleSettlingMs?: number;
  /** rows the settlement duty takes per run, of each kind; default 20 */
  dutyBatch?: number;
  /**
   * the settlement duty retries a `failed` row once this long (ms, on the gateway's clock) has passed since
   * its last try, doubled with each try the duty made, up to `retryBackoffMaxMs`; default 30 s
   */
  retryBackoffMs?: number;
  /** the longest pause between two of the duty's tries of one row; default 30 minutes */
  retryBackoffMaxMs?: number;
}

/** What one run of the settlement duty did. */
export interface SettlementDutyResult { settled: number; retried: number; expired: number; reconciled: number; mismatched: number }

// what a seller puts in its 402's `accepts` (GET /v1/x402/exact) and what verify and settle answer: the contract's (x402.ts)
export type { ExactOffer, ExactVerified };
export type ExactSettled = Omit<ContractExactSettled, 'receipt'> & { receipt: ReceiptView };

/** The EIP-3009 authorization a row keeps. */
function authorizationOf(row: X402Authorization): ExactAuthorization {
  return { from: row.payer, to: row.payTo, value: row.value, validAfter: String(row.validAfter), validBefore: String(row.validBefore), nonce: row.nonce };
}

/** A refusal x402 clients read: 402 with x402's error reason. */
function refusal(reason: string, message: string, details: Record<string, unknown> = {}): AppError {
  return new AppError('PAYMENT_REQUIRED', message, { reason, ...details });
}

/** The first problem of `value` against `schema`, as a field path under `at` (`payload.payload.authorization.nonce`). */
function firstProblem(schema: TSchema, value: unknown, at: string): { field: string; message: string } | undefined {
  const e = Value.Errors(schema, value).First();
  return e ? { field: at + e.path.replace(/\//g, '.'), message: e.message } : undefined;
}

/**
 * The authorization and signature of an x402 `exact` PaymentPayload, checked against the contract's
 * ExactPaymentPayload: not an x402 payload 400, another scheme 402 invalid_exact_evm_scheme, a bad
 * authorization field 400 naming it, a signature that is not hex 402 invalid_exact_evm_failed_to_parse_signature.
 */
export function parseExactPayload(payload: unknown): { network: string; authorization: ExactAuthorization; signature: string } {
  if (!Value.Check(X402PaymentPayload, payload)) throw validationError('payload', 'must be the x402 PaymentPayload object {x402Version, accepted: {scheme, network}, payload: {authorization, signature}}');
  const p = payload as X402PaymentPayload;
  if (p.accepted.scheme !== 'exact') throw refusal('invalid_exact_evm_scheme', `payload.accepted.scheme is ${p.accepted.scheme}; this route settles the x402 "exact" scheme`);
  const a = p.payload.authorization;
  if (a === undefined || a === null || typeof a !== 'object') throw validationError('payload.payload.authorization', 'is missing: an EIP-3009 authorization {from, to, value, validAfter, validBefore, nonce}');
  const bad = firstProblem(ExactAuthorization, a, 'payload.payload.authorization');
  if (bad) throw validationError(bad.field, `is not what EIP-3009 says (${bad.message}): from and to addresses, value, validAfter and validBefore decimal integer strings, nonce 32 bytes of hex`);
  if (!Value.Check(ExactSignature, p.payload.signature)) throw refusal('invalid_exact_evm_failed_to_parse_signature', 'payload.payload.signature is not a hex signature');
  if (!Value.Check(ExactPaymentPayload, payload)) throw validationError('payload.accepted.network', 'must be the CAIP-2 network the authorization is on, e.g. eip155:8453');
  const exact = payload as ExactPaymentPayload;
  return { network: exact.accepted.network, authorization: exact.payload.authorization, signature: exact.payload.signature };
}

export class X402ExactService {
  private readonly margin: number;
  private readonly attempts: number;
  private readonly staleMs: number;
  private readonly batch: number;
  private readonly backoffMs: number;
  private readonly backoffMaxMs: number;

  constructor(private deps: PaymentDeps, private chain: ExactChain | undefined, settings: ExactSettings = {}) {
    this.margin = settings.validityMarginSeconds ?? 30;
    this.attempts = Math.max(1, settings.settleAttempts ?? 3);
    this.staleMs = settings.staleSettlingMs ?? 10 * 60_000;
    this.batch = settings.dutyBatch ?? 20;
    this.backoffMs = settings.retryBackoffMs ?? 30_000;
    this.backoffMaxMs = settings.retryBackoffMaxMs ?? 30 * 60_000;
  }

  /**
   * Whether the duty's next try of a `failed` row is due: `retryBackoffMs` after its last try, doubled for
   * each try the duty made since the settle route's own (`settleAttempts`), at most `retryBackoffMaxMs`. A
   * chain that refuses for hours is then asked a few times an hour, not at every run of the duty.
   */
  private due(row: X402Authorization, now: number): boolean {
    const tries = Math.max(0, row.attempts - this.attempts);
    const pause = Math.min(this.backoffMaxMs, this.backoffMs * 2 ** Math.min(tries, 30));
    return row.updatedAt + pause <= now;
  }

  private readonly duty = new Periodic((onError) => this.runSettlementDuty(onError));

  /** Runs the settlement duty every `intervalMs` (0, or no chain: never); `when`: while this instance holds the fleet duty. */
  startSettlementDuty(intervalMs: number, onError: (e: unknown) => void = () => {}, when?: () => Promise<boolean>): void {
    if (this.chain) this.duty.start(intervalMs, onError, when);
  }

  stopSettlementDuty(): Promise<void> {
    return this.duty.stop();
  }

  private need(): ExactChain {
    if (!this.chain) throw new AppError('NOT_SUPPORTED', 'this gateway has no chain configured for x402 "exact" payments (rails.adapters.exact); offer the "agentpay" scheme only');
    return this.chain;
  }

  private unitsPerMinor(): bigint {
    return 10n ** BigInt(Math.max(0, this.need().decimals - 2));
  }

  /** What sellers offer (nothing configured twice: the seller reads it from here); null: no chain, offer agentpay only. */
  offer(p: Principal): ExactOffer | null {
    requireProvider(p);
    return this.publicOffer();
  }

  /** The same offer, for the market's lists (discovery's x402 Bazaar list); null: no chain. */
  publicOffer(): ExactOffer | null {
    const c = this.chain;
    if (!c) return null;
    return { scheme: 'exact', network: c.network, asset: c.asset, payTo: c.payTo, decimals: c.decimals, currency: 'USD', unitsPerMinor: this.unitsPerMinor().toString(), extra: { ...c.eip712 } };
  }

  /** Verifies and reserves an authorization for one call of the capability; refusals are 402 with x402's reason. */
  async verify(p: Principal, input: { capabilityId: string; payload: unknown }): Promise<ExactVerified> {
    requireProvider(p);
    const c = this.need();
    const { network, authorization: a, signature } = parseExactPayload(input.payload);
    const { ctx } = this.deps;
    const capability = await ctx.store.read((r) => r.capabilities.get(input.capabilityId), { snapshot: false });
    if (!capability || capability.providerId !== p.tenantId) throw notFound('CAPABILITY_NOT_FOUND', 'capability', input.capabilityId);
    if (capability.status !== 'active') throw new AppError('CONFLICT', `capability ${capability.id} is ${capability.status} and cannot be sold`, { capabilityId: capability.id });
    if (capability.currency !== 'USD') throw new AppError('NOT_SUPPORTED', `capability ${capability.id} is priced in ${capability.currency}; x402 "exact" pays USD prices in USDC only`);
    if (network !== c.network) throw refusal('invalid_exact_evm_network_mismatch', `the payment is on ${network}, this gateway settles on ${c.network}`, { network: c.network });
    if (a.to.toLowerCase() !== c.payTo.toLowerCase()) throw refusal('invalid_exact_evm_recipient_mismatch', `the authorization pays ${a.to}, not the platform's receiving address ${c.payTo}`, { payTo: c.payTo });
    const price = capability.priceMinor * this.unitsPerMinor();
    if (BigInt(a.value) < price) throw refusal('invalid_exact_evm_authorization_value', `the authorization's value ${a.value} is below the price ${price} (base units)`, { required: price.toString() });
    const now = await c.chainTime();
    if (BigInt(a.validAfter) >= BigInt(now)) throw refusal('invalid_exact_evm_payload_authorization_valid_after', `the authorization is not valid before ${a.validAfter} (chain time ${now})`);
    if (BigInt(a.validBefore) < BigInt(now + this.margin)) {
      throw refusal('invalid_exact_evm_payload_authorization_valid_before', `the authorization expires at ${a.validBefore}, less than ${this.margin} s after the chain's time ${now}: too late to settle; sign a new one`);
    }
    if (!(await c.verifySignature(a, signature))) throw refusal('invalid_exact_evm_signature', `the signature is not ${a.from}'s EIP-712 signature of this authorization`);
    const [used, balance] = await Promise.all([c.authorizationUsed(a.from, a.nonce), c.balanceOf(a.from)]);
    if (used) throw refusal('invalid_exact_evm_nonce_already_used', `the authorization's nonce ${a.nonce} was already used on chain`);
    if (balance < BigInt(a.value)) throw refusal('invalid_exact_evm_insufficient_balance', `${a.from} holds ${balance} base units, less than the ${a.value} authorized`);

    const t = ctx.clock.now();
    const row: X402Authorization = {
      id: ctx.ids.next('x402Authorization'), network: c.network, asset: c.asset.toLowerCase(), nonce: a.nonce.toLowerCase(), payer: a.from.toLowerCase(), payTo: a.to.toLowerCase(),
      value: BigInt(a.value).toString(), validAfter: Number(a.validAfter), validBefore: Math.min(Number(a.validBefore), Number.MAX_SAFE_INTEGER), signature,
      capabilityId: capability.id, providerId: p.tenantId, amountMinor: capability.priceMinor, currency: capability.currency, state: 'reserved',
      txHash: null, responseHash: null, transactionId: null, attempts: 0, lastError: null, createdAt: t, updatedAt: t, settledAt: null, reconciledAt: null,
    };
    try {
      await ctx.store.tx((r) => r.x402Authorizations.insert(row));
    } catch (e) {
      if (isUniqueViolation(storeError(e))) throw refusal('invalid_exact_evm_nonce_already_used', `the authorization's nonce ${a.nonce} already paid a call here; sign a new one`);
      throw e;
    }
    return { authorizationId: row.id, capabilityId: row.capabilityId, payer: a.from, amountMinor: row.amountMinor.toString(), currency: row.currency, network: row.network };
  }

  private async own(p: Principal, id: string): Promise<X402Authorization> {
    requireProvider(p);
    const row = await this.deps.ctx.store.read((r) => r.x402Authorizations.get(id));
    if (!row || row.providerId !== p.tenantId) throw notFound('NOT_FOUND', 'x402 authorization', id);
    return row;
  }

  /** The handler failed: the reservation is released and nothing is submitted. */
  async release(p: Principal, input: { authorizationId: string }): Promise<{ authorizationId: string; state: string }> {
    const row = await this.own(p, input.authorizationId);
    const ok = await this.deps.ctx.store.tx((r) => r.x402Authorizations.transition(row.id, ['reserved'], { state: 'released', updatedAt: this.deps.ctx.clock.now() }));
    const now = ok ? 'released' : (await this.deps.ctx.store.read((r) => r.x402Authorizations.get(row.id)))!.state;
    if (now !== 'released') throw new AppError('CONFLICT', `x402 authorization ${row.id} is ${now}; only a reserved one is released`, { state: now });
    return { authorizationId: row.id, state: now };
  }

  /** Settles on chain, then records the sale (once); a repeated call answers the same receipt. */
  async settle(p: Principal, input: { authorizationId: string; responseHash: string }): Promise<ExactSettled> {
    const c = this.need();
    const { ctx } = this.deps;
    const row = await this.own(p, input.authorizationId);
    if (row.state === 'settled') return this.settledView(row);
    if (row.state !== 'reserved') throw new AppError('CONFLICT', `x402 authorization ${row.id} is ${row.state}; only a reserved one settles`, { state: row.state });
    const claimedAt = ctx.clock.now();
    const claimed = await ctx.store.tx((r) => r.x402Authorizations.transition(row.id, ['reserved'], { state: 'settling', responseHash: input.responseHash, updatedAt: claimedAt }));
    if (!claimed) {
      const again = (await ctx.store.read((r) => r.x402Authorizations.get(row.id)))!;
      if (again.state === 'settled') return this.settledView(again);
      throw new AppError('CONFLICT', `x402 authorization ${row.id} is ${again.state}`, { state: again.state });
    }
    const mine: X402Authorization = { ...row, state: 'settling', responseHash: input.responseHash, updatedAt: claimedAt };
    let txHash: string | undefined;
    let lastError = '';
    for (let i = 1; i <= this.attempts && txHash === undefined; i++) {
      try {
        if (mine.txHash !== null) {
          // a transaction went out on an earlier try: the chain says whether it landed before another is sent
          const seen = await c.lookup(authorizationOf(mine), mine.txHash);
          if (seen.state === 'used' && seen.confirmed) { txHash = seen.txHash; break; }
          if (seen.state === 'used_elsewhere') { lastError = `the nonce ${mine.nonce} was used on chain without a transfer of this authorization`; break; }
          if (seen.state === 'used' || seen.pending !== null) { lastError = `the transaction ${seen.state === 'used' ? seen.txHash : mine.txHash} is not confirmed yet`; break; }
        }
        ({ txHash } = await c.settle(authorizationOf(mine), mine.signature, (hash) => this.keepTxHash(mine, hash)));
      } catch (e) {
        lastError = e instanceof Error ? e.message.slice(0, 500) : String(e);
        await ctx.store.tx((r) => r.x402Authorizations.update(row.id, { attempts: i, lastError, updatedAt: ctx.clock.now() }));
        mine.attempts = i;
      }
    }
    if (txHash === undefined) {
      const validBefore = Math.min(row.validBefore * 1000, 8.64e15);
      await ctx.store.tx(async (r) => {
        await r.x402Authorizations.update(row.id, { state: 'failed', lastError, updatedAt: ctx.clock.now() });
        await this.alert(r, { ...mine, lastError }, 'settle', lastError, iso(validBefore));
      });
      throw new AppError('TREASURY_UNAVAILABLE', `the x402 payment could not be settled on ${c.network} after ${this.attempts} tries: ${lastError}`, { authorizationId: row.id, reason: 'invalid_exact_evm_transaction_failed' });
    }
    await this.ensureHoldingWallet();
    try {
      return await this.settledView(await ctx.store.tx((r) => this.recordSale(r, mine, txHash!)));
    } catch (e) {
      // the settlement duty recorded it meanwhile (this call was slow enough to look crashed): the same receipt
      const now = (await ctx.store.read((r) => r.x402Authorizations.get(row.id)))!;
      if (now.state === 'settled') return this.settledView(now);
      throw e;
    }
  }

  /** the transaction just sent for `row`, kept before its confirmations */
  private async keepTxHash(row: X402Authorization, txHash: string): Promise<void> {
    row.txHash = txHash;
    await this.deps.ctx.store.tx((r) => r.x402Authorizations.update(row.id, { txHash, updatedAt: this.deps.ctx.clock.now() }));
  }

  /** `x402.settlement_failed` for the seller and the operator (stage reconcile: the operator only), in the caller's transaction */
  private async alert(r: Repos, row: X402Authorization, stage: 'settle' | 'retry' | 'reconcile', error: string, retryUntil: string | null): Promise<void> {
    const data = {
      authorizationId: row.id, stage, capabilityId: row.capabilityId, providerId: row.providerId, payer: row.payer, network: row.network, asset: row.asset,
      value: row.value, amountMinor: row.amountMinor.toString(), currency: row.currency, attempts: row.attempts, error, txHash: row.txHash, retryUntil,
    };
    if (stage !== 'reconcile') await recordEvent(r, this.deps.ctx, row.providerId, 'x402.settlement_failed', data);
    await recordEvent(r, this.deps.ctx, OPERATOR_TENANT_ID, 'x402.settlement_failed', data);
  }

  /**
   * One run of the settlement duty: retries `failed` rows and `settling` rows left by a crash (the chain
   * asked first: recorded once if it was used, sent again only if unused and still valid, `expired` and
   * alerted if it can no longer be), then reconciles `settled` rows against the chain.
   */
  async runSettlementDuty(onError: (e: unknown) => void = (e) => { throw e; }): Promise<SettlementDutyResult> {
    const result: SettlementDutyResult = { settled: 0, retried: 0, expired: 0, reconciled: 0, mismatched: 0 };
    if (!this.chain) return result;
    const { ctx } = this.deps;
    const now = ctx.clock.now();
    const [settling, failed, settled] = await ctx.store.read(async (r) => [
      await r.x402Authorizations.listByState(['settling'], this.batch),
      await r.x402Authorizations.listByState(['failed'], this.batch),
      await r.x402Authorizations.unreconciled(this.batch),
    ] as const, { snapshot: false });
    for (const row of [...settling.filter((x) => x.updatedAt <= now - this.staleMs), ...failed.filter((x) => this.due(x, now))]) {
      try {
        const outcome = await this.retry(this.chain, row);
        if (outcome) result[outcome] += 1;
      } catch (e) {
        onError(e);
      }
    }
    for (const row of settled) {
      try {
        const outcome = await this.reconcile(this.chain, row);
        if (outcome) result[outcome] += 1;
      } catch (e) {
        onError(e);
      }
    }
    return result;
  }

  private async retry(c: ExactChain, row: X402Authorization): Promise<'settled' | 'retried' | 'expired' | undefined> {
    const { ctx } = this.deps;
    const at = ctx.clock.now();
    // claimed by this run alone: the row as read (its state and its last change), else another got there first
    const claimed = await ctx.store.tx((r) => r.x402Authorizations.transition(row.id, [row.state], { state: 'settling', updatedAt: at }, row.updatedAt));
    if (!claimed) return undefined;
    const mine: X402Authorization = { ...row, state: 'settling', updatedAt: at };
    const wasFailed = row.state === 'failed';
    const auth = authorizationOf(mine);
    const seen = await c.lookup(auth, mine.txHash);
    if (seen.state === 'used') {
      if (!seen.confirmed) {
        // landed, not confirmed yet: kept `settling` and looked at again once stale
        await ctx.store.tx((r) => r.x402Authorizations.update(row.id, { txHash: seen.txHash, updatedAt: at }));
        return undefined;
      }
      await this.ensureHoldingWallet();
      await ctx.store.tx((r) => this.recordSale(r, mine, seen.txHash));
      return 'settled';
    }
    if (seen.state === 'used_elsewhere') {
      return this.giveUp(mine, `the nonce ${mine.nonce} was used on chain without a transfer of ${mine.value} to ${mine.payTo} (cancelled by the payer?)`);
    }
    if (seen.pending !== null) return undefined; // sent, not mined yet: looked at again once stale
    const now = await c.chainTime();
    if (mine.validBefore <= now + 5) return this.giveUp(mine, `the authorization expired unsettled at ${mine.validBefore} (chain time ${now})`);
    const attempts = mine.attempts + 1;
    try {
      const { txHash } = await c.settle(auth, mine.signature, (hash) => this.keepTxHash(mine, hash));
      await this.ensureHoldingWallet();
      await ctx.store.tx((r) => this.recordSale(r, { ...mine, attempts }, txHash));
      return 'settled';
    } catch (e) {
      const lastError = e instanceof Error ? e.message.slice(0, 500) : String(e);
      await ctx.store.tx(async (r) => {
        await r.x402Authorizations.update(row.id, { state: 'failed', attempts, lastError, updatedAt: ctx.clock.now() });
        // a row left `settling` by a crash fails here for the first time: alerted as the route would have
        if (!wasFailed) await this.alert(r, { ...mine, attempts, lastError }, 'settle', lastError, iso(Math.min(mine.validBefore * 1000, 8.64e15)));
      });
      return 'retried';
    }
  }

  private async giveUp(row: X402Authorization, error: string): Promise<'expired'> {
    const { ctx } = this.deps;
    await ctx.store.tx(async (r) => {
      await r.x402Authorizations.update(row.id, { state: 'expired', lastError: error, updatedAt: ctx.clock.now() });
      await this.alert(r, { ...row, lastError: error }, 'retry', error, null);
    });
    return 'expired';
  }

  private async reconcile(c: ExactChain, row: X402Authorization): Promise<'reconciled' | 'mismatched' | undefined> {
    const { ctx } = this.deps;
    const seen = await c.lookup(authorizationOf(row), row.txHash);
    if (seen.state === 'used' && seen.txHash.toLowerCase() === row.txHash?.toLowerCase()) {
      if (!seen.confirmed) return undefined;
      await ctx.store.tx((r) => r.x402Authorizations.update(row.id, { reconciledAt: ctx.clock.now() }));
      return 'reconciled';
    }
    const error = seen.state === 'used'
      ? `recorded as settled by ${row.txHash}, but the chain shows the transfer in ${seen.txHash}`
      : seen.state === 'unused' ? `recorded as settled by ${row.txHash}, but the authorization is unused on chain (the transaction is gone: a reorganisation?)`
        : `recorded as settled by ${row.txHash}, but the chain shows no transfer of it`;
    await ctx.store.tx(async (r) => {
      await r.x402Authorizations.update(row.id, { reconciledAt: ctx.clock.now(), lastError: error });
      await this.alert(r, { ...row, lastError: error }, 'reconcile', error, null);
    });
    return 'mismatched';
  }

  /** One database transaction: the chain's amount into the platform's holding, the sale as any other. */
  private async recordSale(r: Repos, row: X402Authorization, txHash: string): Promise<X402Authorization> {
    const { ctx } = this.deps;
    const now = ctx.clock.now();
    const responseHash = row.responseHash;
    if (responseHash === null) throw new AppError('INTERNAL', `x402 authorization ${row.id} is settling without the seller's responseHash`);
    const txn: Transaction = {
      id: ctx.ids.next('transaction'), nonce: `x402:${row.network}:${row.asset}:${row.nonce}`, capabilityId: row.capabilityId, providerId: row.providerId,
      walletId: PLATFORM_X402_WALLET_ID, workspaceId: OPERATOR_TENANT_ID, amountMinor: row.amountMinor, feeMinor: null, currency: row.currency,
      chargedMinor: null, metering: null, status: 'authorized', failureReason: null, authorizedAt: now, expiresAt: now + this.deps.settings.releaseUnsettledAfterMs, resolvedAt: null,
    };
    const patch = { state: 'settled' as const, txHash, transactionId: txn.id, attempts: row.attempts, updatedAt: now, settledAt: now };
    // first, in this transaction: only the claimant of a `settling` row records its sale (once; the sale's nonce is unique too)
    if (!(await r.x402Authorizations.transition(row.id, ['settling'], patch))) {
      throw new AppError('CONFLICT', `x402 authorization ${row.id} is no longer settling; its sale is recorded once`, { authorizationId: row.id });
    }
    await r.transactions.insert(txn);
    // the on-chain amount, in cents (sub-cent dust stays with the treasury uncredited), held for the sale
    const credited = BigInt(row.value) / this.unitsPerMinor();
    await post(r, ctx, {
      walletId: PLATFORM_X402_WALLET_ID, type: 'deposit', amountMinor: credited, holdMinor: row.amountMinor, currency: row.currency,
      transactionId: txn.id, reference: `x402:${txHash}`, memo: `x402 exact: ${row.value} base units from ${row.payer} in ${txHash}`,
    });
    const tenant = await r.tenants.get(row.providerId);
    if (!tenant?.settlementWalletId) throw new AppError('INTERNAL', `provider ${row.providerId} has no settlement wallet`);
    await succeed(this.deps, r, txn, tenant.settlementWalletId, undefined, null, responseHash, now);
    return { ...row, ...patch };
  }

  private async ensureHoldingWallet(): Promise<void> {
    const { ctx } = this.deps;
    if (await ctx.store.read((r) => r.wallets.get(PLATFORM_X402_WALLET_ID))) return;
    try {
      await ctx.store.tx((r) => r.wallets.insert(newWalletRow({ id: PLATFORM_X402_WALLET_ID, tenantId: OPERATOR_TENANT_ID, ownerType: 'platform', ownerId: 'platform-x402', publicKeyPem: null }, ctx.clock.now())));
    } catch (e) {
      if (!isUniqueViolation(storeError(e))) throw e; // another instance made it
    }
  }

  private async settledView(row: X402Authorization): Promise<ExactSettled> {
    const receipt = await this.deps.ctx.store.read(async (r) => (await r.receipts.byTransaction(row.transactionId!)).find((x) => x.status === 'success'));
    if (!receipt) throw new AppError('INTERNAL', `x402 authorization ${row.id} is settled without a receipt`);
    return { authorizationId: row.id, receipt: receiptView(receipt), transaction: row.txHash!, payer: row.payer, network: row.network, amount: row.value };
  }
}
