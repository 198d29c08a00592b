/**
 * The sandbox's simulated outside world: a card/bank processor's payment intents, a
 * USDC chain's transfers, a bank's payouts, the USDC price, the screening list and
 * outages. It is what the sandbox adapters (./adapters.ts) talk to and what the
 * sandbox controls (POST /v1/sandbox/...) move by hand. Its state is kept in the
 * `sandbox_objects` table, so it survives a gateway restart like a real processor would;
 * none of it is the platform's own record of money (that is the ledger and
 * rail_transactions). Time is the injected clock: confirmations, the webhook signature
 * time and business days all follow it.
 */
import { createHash } from 'node:crypto';
import { AppError } from '../../core/errors.js';
import type { DomainContext } from '../../domain/platform/context.js';
import type { ObservedDeposit, Rail, RailAsset, SandboxSettingsPatch, SandboxWorldPort } from '../../domain/rails/adapters.js';
import { formatPrice, parsePrice } from '../../domain/rails/pricing.js';
import { signWebhook } from '../../domain/rails/webhook-signature.js';
import type { SandboxSettings, SignedWebhook } from 'agentpay-sdk/contract';

/** The sandbox processor's webhook signature header. */
export const SANDBOX_SIGNATURE_HEADER = 'sandbox-signature';

/** Destinations the sandbox screening always refuses (documented test values). */
export const SANDBOX_SANCTIONED = ['0x000000000000000000000000000000000000bad1', 'ext_sanctioned'] as const;

/** The settings as answered (agentpay-sdk/contract, rails.ts). */
export type { SandboxSettings };

export type { SandboxSettingsPatch };

const DEFAULT_SETTINGS: SandboxSettings = {
  usdcPrice: '1.0', screeningDown: false, pricingDown: false, payoutsDown: false, sanctioned: [], treasuryShortfallMinor: '0',
};

export interface SandboxIntent {
  ref: string;
  amountMinor: string;
  currency: RailAsset;
  status: 'pending' | 'succeeded' | 'declined';
  declineReason?: string;
  /** event id per outcome, so a redelivery carries the same id */
  eventId?: string;
  createdAt: number;
}

export interface SandboxTransfer {
  hash: string;
  direction: 'in' | 'out';
  from: string;
  to: string;
  /** USDC base units */
  amountMinor: string;
  at: number;
}

export interface SandboxPayout {
  ref: string;
  payoutId: string;
  rail: Rail;
  destination: string;
  amountMinor: string;
  asset: RailAsset;
  state: 'submitted' | 'confirmed' | 'returned';
  submittedAt: number;
  settleAt: number;
  reason?: string;
}


const DAY = 24 * 60 * 60 * 1000;

/** `ms` plus n business days (Saturdays and Sundays, UTC, skipped). */
export function addBusinessDays(ms: number, n: number): number {
  let t = ms;
  let left = n;
  while (left > 0) {
    t += DAY;
    const dow = new Date(t).getUTCDay();
    if (dow !== 0 && dow !== 6) left -= 1;
  }
  return t;
}

export interface SandboxWorldOptions {
  webhookSecret: string;
  sanctioned: readonly string[];
  topUpLimitMinor: bigint;
  usdcConfirmMs: number;
}

export class SandboxWorld implements SandboxWorldPort {
  constructor(private ctx: DomainContext, readonly opts: SandboxWorldOptions) {}

  private now() {
    return this.ctx.clock.now();
  }

  private async get<T>(kind: string, id: string): Promise<T | undefined> {
    return (await this.ctx.store.read((r) => r.sandboxObjects.get(kind, id)))?.data as T | undefined;
  }

  private async put<T extends object>(kind: string, id: string, value: T): Promise<T> {
    await this.ctx.store.tx((r) => r.sandboxObjects.put(kind, id, value as Record<string, unknown>, this.now()));
    return value;
  }

  /** Read-modify-write of one object in one transaction; `fn` throws to refuse. */
  private async modify<T extends object>(kind: string, id: string, fn: (cur: T | undefined) => T): Promise<T> {
    return this.ctx.store.tx(async (r) => {
      const next = fn((await r.sandboxObjects.get(kind, id))?.data as T | undefined);
      await r.sandboxObjects.put(kind, id, next as Record<string, unknown>, this.now());
      return next;
    });
  }

  private async list<T>(kind: string, afterSeq = 0): Promise<{ items: T[]; lastSeq: number }> {
    const rows = await this.ctx.store.read((r) => r.sandboxObjects.list(kind, afterSeq));
    return { items: rows.map((o) => o.data as T), lastSeq: rows.at(-1)?.seq ?? afterSeq };
  }

  private ref(): string {
    return this.ctx.ids.next('sandboxRef');
  }

  // ---- settings: price, outages, screening list, treasury ----

  async settings(): Promise<SandboxSettings> {
    // reading never writes: defaults until someone changes something
    return { ...DEFAULT_SETTINGS, ...(await this.get<SandboxSettings>('settings', 'global')) };
  }

  async updateSettings(patch: SandboxSettingsPatch): Promise<SandboxSettings> {
    if (patch.usdcPrice !== undefined) parsePrice(patch.usdcPrice, 'usdcPrice');
    return this.modify<SandboxSettings>('settings', 'global', (stored) => {
      const cur = { ...DEFAULT_SETTINGS, ...stored };
      const sanctioned = new Set(cur.sanctioned);
      for (const d of patch.sanction ?? []) sanctioned.add(d.toLowerCase());
      for (const d of patch.unsanction ?? []) sanctioned.delete(d.toLowerCase());
      return {
        usdcPrice: patch.usdcPrice !== undefined ? formatPrice(parsePrice(patch.usdcPrice, 'usdcPrice')) : cur.usdcPrice,
        screeningDown: patch.screeningDown ?? cur.screeningDown,
        pricingDown: patch.pricingDown ?? cur.pricingDown,
        payoutsDown: patch.payoutsDown ?? cur.payoutsDown,
        sanctioned: [...sanctioned].sort(),
        treasuryShortfallMinor: patch.treasuryShortfallMinor !== undefined ? patch.treasuryShortfallMinor.toString() : cur.treasuryShortfallMinor,
      };
    });
  }

  async isSanctioned(destination: string): Promise<boolean> {
    const d = destination.toLowerCase();
    const s = await this.settings();
    return [...SANDBOX_SANCTIONED, ...this.opts.sanctioned.map((x) => x.toLowerCase()), ...s.sanctioned].includes(d);
  }

  // ---- the processor ----

  async createIntent(amountMinor: bigint, currency: RailAsset): Promise<SandboxIntent> {
    const intent: SandboxIntent = { ref: this.ref(), amountMinor: amountMinor.toString(), currency, status: 'pending', createdAt: this.now() };
    if (amountMinor > this.opts.topUpLimitMinor) {
      intent.status = 'declined';
      intent.declineReason = 'amount_over_limit';
    }
    return this.put('intent', intent.ref, intent);
  }

  intent(ref: string): Promise<SandboxIntent | undefined> {
    return this.get<SandboxIntent>('intent', ref);
  }

  /**
   * The payer finished (or the processor declined) the intent: its outcome is fixed and
   * the signed webhook for it is returned. Settling again to the same outcome gives the
   * same event again (a redelivery); the other outcome is refused.
   */
  async settleIntent(ref: string, outcome: 'succeeded' | 'declined', declineReason?: string): Promise<SignedWebhook> {
    const intent = await this.modify<SandboxIntent>('intent', ref, (cur) => {
      if (!cur) throw new AppError('NOT_FOUND', `the sandbox processor has no intent ${ref}`, { externalRef: ref });
      if (cur.status === outcome) return cur;
      if (cur.status !== 'pending') throw new AppError('CONFLICT', `intent ${ref} is already ${cur.status}`, { externalRef: ref, status: cur.status });
      return { ...cur, status: outcome, eventId: this.ref(), ...(outcome === 'declined' ? { declineReason: declineReason ?? 'card_declined' } : {}) };
    });
    return this.webhookFor(intent);
  }

  /** The signed webhook announcing an intent's outcome, signed now. */
  /** A webhook exactly as the processor sends it: the raw body and its headers. */
  webhookFor(intent: SandboxIntent): SignedWebhook {
    const body = JSON.stringify({
      id: intent.eventId,
      type: intent.status === 'succeeded' ? 'topup.succeeded' : 'topup.declined',
      created: Math.floor(this.now() / 1000),
      data: {
        externalRef: intent.ref,
        amountMinor: intent.amountMinor,
        currency: intent.currency,
        ...(intent.declineReason ? { declineReason: intent.declineReason } : {}),
      },
    });
    return { body, headers: { 'content-type': 'application/json', [SANDBOX_SIGNATURE_HEADER]: signWebhook(this.opts.webhookSecret, body, this.now()) } };
  }

  // ---- the chain ----

  /** Deterministic per wallet, like an HD custodian deriving one address per account. */
  depositAddressFor(walletId: string): string {
    return '0x' + createHash('sha256').update(`agentpay-sandbox-chain:${walletId}`).digest('hex').slice(0, 40);
  }

  /** A USDC transfer into a platform deposit address (a payer's deposit, or the faucet). */
  async transferIn(to: string, amountMinor: bigint, from: string): Promise<SandboxTransfer> {
    const t: SandboxTransfer = { hash: this.txHash(), direction: 'in', from, to: to.toLowerCase(), amountMinor: amountMinor.toString(), at: this.now() };
    return this.put('transfer', t.hash, t);
  }

  /** USDC arrives at `to` and the chain adapter observes it at once: the deposit as it reports it. */
  async depositIn(to: string, amountMinor: bigint, from: string): Promise<ObservedDeposit> {
    return observed(await this.transferIn(to, amountMinor, from));
  }

  transfer(hash: string): Promise<SandboxTransfer | undefined> {
    return this.get<SandboxTransfer>('transfer', hash);
  }

  transfersSince(afterSeq: number): Promise<{ items: SandboxTransfer[]; lastSeq: number }> {
    return this.list<SandboxTransfer>('transfer', afterSeq);
  }

  private txHash(): string {
    return '0x' + createHash('sha256').update(this.ref()).digest('hex');
  }

  // ---- payouts (the bank and the chain) ----

  /** Idempotent per payoutId: a second submission returns the first. */
  async submitPayout(p: { payoutId: string; rail: Rail; destination: string; amountMinor: bigint; asset: RailAsset }): Promise<SandboxPayout> {
    const existing = await this.get<{ ref: string }>('payout-key', p.payoutId);
    if (existing) return (await this.get<SandboxPayout>('payout', existing.ref))!;
    const now = this.now();
    const settleAt = p.rail === 'usdc_base' ? now + this.opts.usdcConfirmMs : addBusinessDays(now, p.rail === 'ach' ? 2 : 1);
    const payout: SandboxPayout = {
      ref: p.rail === 'usdc_base' ? this.txHash() : this.ref(),
      payoutId: p.payoutId, rail: p.rail, destination: p.destination, amountMinor: p.amountMinor.toString(), asset: p.asset,
      state: 'submitted', submittedAt: now, settleAt,
    };
    await this.ctx.store.tx(async (r) => {
      await r.sandboxObjects.put('payout', payout.ref, payout as unknown as Record<string, unknown>, now);
      await r.sandboxObjects.put('payout-key', p.payoutId, { ref: payout.ref }, now);
      if (p.rail === 'usdc_base') {
        const out: SandboxTransfer = { hash: payout.ref, direction: 'out', from: 'sandbox-treasury', to: p.destination.toLowerCase(), amountMinor: payout.amountMinor, at: now };
        await r.sandboxObjects.put('transfer', out.hash, out as unknown as Record<string, unknown>, now);
      }
    });
    return payout;
  }

  /** The payout the rail took under the platform's `payoutId`, as it sees it now. */
  async payoutById(payoutId: string): Promise<SandboxPayout | undefined> {
    const key = await this.get<{ ref: string }>('payout-key', payoutId);
    return key && this.payout(key.ref);
  }

  /** The payout as the rail sees it now: a submitted one confirms once its time has come. */
  async payout(ref: string): Promise<SandboxPayout | undefined> {
    const p = await this.get<SandboxPayout>('payout', ref);
    if (p && p.state === 'submitted' && this.now() >= p.settleAt) return this.put<SandboxPayout>('payout', ref, { ...p, state: 'confirmed' });
    return p;
  }

  /** Confirms at once, or returns, a submitted payout (a returned one can no longer confirm). */
  async settlePayout(ref: string, outcome: 'confirmed' | 'returned', reason?: string): Promise<SandboxPayout> {
    await this.payout(ref); // let time confirm it first, as it would have
    return this.modify<SandboxPayout>('payout', ref, (cur) => {
      if (!cur) throw new AppError('NOT_FOUND', `the sandbox rails have no payout ${ref}`, { externalRef: ref });
      if (cur.state === outcome) return cur;
      if (cur.state !== 'submitted') throw new AppError('CONFLICT', `payout ${cur.payoutId} is already ${cur.state} on the rail`, { state: cur.state });
      return { ...cur, state: outcome, ...(outcome === 'returned' ? { reason: reason ?? 'account_closed' } : {}) };
    });
  }

  // ---- the treasury ----

  /** What the sandbox processor, chain and bank hold for the platform. */
  async holdings(): Promise<{ processorUsdMinor: bigint; chainUsdcMinor: bigint; bankUsdMinor: bigint }> {
    const intents = (await this.list<SandboxIntent>('intent')).items;
    const transfers = (await this.list<SandboxTransfer>('transfer')).items;
    const payouts = (await this.list<SandboxPayout>('payout')).items;
    const settings = await this.settings();
    const sum = <T>(xs: T[], f: (x: T) => bigint) => xs.reduce((s, x) => s + f(x), 0n);
    return {
      processorUsdMinor: sum(intents, (i) => (i.status === 'succeeded' ? BigInt(i.amountMinor) : 0n)),
      chainUsdcMinor: sum(transfers, (t) => {
        if (t.direction === 'in') return BigInt(t.amountMinor);
        // a returned USDC payout came back to the treasury
        const returned = payouts.some((p) => p.ref === t.hash && p.state === 'returned');
        return returned ? 0n : -BigInt(t.amountMinor);
      }),
      bankUsdMinor: sum(payouts, (p) => (p.rail !== 'usdc_base' && p.state !== 'returned' ? -BigInt(p.amountMinor) : 0n)) - BigInt(settings.treasuryShortfallMinor),
    };
  }
}

/** A sandbox chain transfer as the chain adapter reports the deposit it makes. */
export const observed = (t: SandboxTransfer): ObservedDeposit => ({
  externalRef: `${t.hash}:0`, address: t.to, amountMinor: BigInt(t.amountMinor), asset: 'USDC', observedAt: t.at,
});
