/**
 * Top-ups: a payment intent at a processor, credited only when the processor confirms
 * it through a signed webhook. The intent's creation writes no money; the confirmation
 * writes the `topup` ledger entry, moves the intent to `confirmed` and records `topup.confirmed`
 * in one transaction (a decline: `declined` and `topup.declined`, nothing credited), once: a
 * second delivery of the confirmation is refused with 409 DUPLICATE_EXTERNAL_REF and credits
 * nothing (and records no event).
 */
import type { TopUpEventData } from 'agentpay-sdk/contract';
import { AppError, notFound } from '../../core/errors.js';
import { recordEvent } from '../platform/events.js';
import { parseMinor } from '../../core/money.js';
import type { RailTransaction } from '../../store/repos/rails.js';
import type { Principal } from '../tenancy/api-keys.js';
import type { DomainContext } from '../platform/context.js';
import { post } from '../wallets/ledger.js';
import type { WalletService } from '../wallets/wallets.js';
import { RailUnavailable, type ProcessorEvent, type RailAsset } from './adapters.js';
import type { RailRegistry } from './registry.js';
import { intentView, railTransactionView } from './views.js';

export interface TopUpInput {
  amountMinor: unknown;
  asset?: RailAsset;
  treasuryProviderId?: string;
}

export class TopUpService {
  constructor(private ctx: DomainContext, private registry: RailRegistry, private wallets: WalletService) {}

  async create(p: Principal, walletId: string, input: TopUpInput) {
    const amount = parseMinor(input.amountMinor, 'amountMinor');
    // the wallet first: another tenant's wallet is 404 whatever this gateway's rails are
    const wallet = await this.wallets.get(p, walletId);
    const adapter = this.registry.topUpProvider(input.asset ?? 'USD', input.treasuryProviderId);
    if (wallet.status !== 'active') throw new AppError('CONFLICT', `wallet ${wallet.id} is ${wallet.status}`);
    const id = this.ctx.ids.next('topup');
    const currency = input.asset ?? 'USD';
    // the processor is outside: never inside a store transaction
    let intent: Awaited<ReturnType<typeof adapter.topUps.createIntent>>;
    try {
      intent = await adapter.topUps.createIntent({ transactionId: id, walletId: wallet.id, amountMinor: amount, currency });
    } catch (e) {
      // the processor is down or refused: nothing was recorded, the caller retries later
      if (e instanceof RailUnavailable) throw new AppError('TREASURY_UNAVAILABLE', `${e.message}; no top-up was created, retry later`, { service: e.service });
      throw e;
    }
    const now = this.ctx.clock.now();
    const row: RailTransaction = {
      id, kind: 'topup', tenantId: wallet.tenantId, walletId: wallet.id, treasuryProviderId: adapter.info.id, rail: null,
      state: intent.status, railAmountMinor: amount, railCurrency: currency, usdAmountMinor: amount, externalRef: intent.externalRef,
      counterparty: null, priceMicros: null, reason: intent.declineReason ?? null, idempotencyKey: null, requestHash: null,
      hostedUrl: intent.hostedUrl ?? null, expectedBy: null, resubmittedAt: null, createdAt: now, updatedAt: now, settledAt: null,
    };
    await this.ctx.store.tx((r) => r.railTransactions.insert(row));
    return { intent: intentView(row, intent.clientSecret ? { clientSecret: intent.clientSecret } : {}) };
  }

  /**
   * A processor's webhook: verified by its adapter (signature, timestamp), then applied
   * once. Unknown intents are 404; a confirmation of a confirmed intent, or a decline of
   * a declined one, is 409 DUPLICATE_EXTERNAL_REF and changes nothing.
   */
  async handleWebhook(treasuryProviderId: string, rawBody: string, headers: Record<string, string | undefined>) {
    const adapter = this.registry.find(treasuryProviderId);
    if (!adapter?.topUps) throw new AppError('NOT_FOUND', `no processor ${treasuryProviderId} sends webhooks here`);
    const event = adapter.topUps.verifyWebhook(rawBody, headers);
    return this.apply(treasuryProviderId, event);
  }

  private apply(treasuryProviderId: string, event: ProcessorEvent) {
    return this.ctx.store.tx(async (r) => {
      const t = await r.railTransactions.byExternalRef(treasuryProviderId, event.externalRef);
      if (!t || t.kind !== 'topup') throw notFound('NOT_FOUND', 'top-up intent', event.externalRef);
      const outcome = event.type === 'topup.succeeded' ? 'confirmed' : 'declined';
      const details = { externalRef: t.externalRef, transactionId: t.id, state: t.state };
      if (t.state === outcome) {
        throw new AppError('DUPLICATE_EXTERNAL_REF', `top-up ${t.externalRef} is already ${t.state}; this delivery is a duplicate and changes nothing`, details);
      }
      if (t.state !== 'pending') throw new AppError('CONFLICT', `top-up ${t.externalRef} is already ${t.state} and cannot become ${outcome}`, details);
      if (event.amountMinor !== t.railAmountMinor || event.currency !== t.railCurrency) {
        throw new AppError('CONFLICT', `the processor reports ${event.amountMinor} ${event.currency} for top-up ${t.externalRef}, which was for ${t.railAmountMinor} ${t.railCurrency}`, details);
      }
      const now = this.ctx.clock.now();
      const reason = outcome === 'declined' ? event.declineReason ?? 'declined' : null;
      if (outcome === 'declined') {
        await r.railTransactions.transition(t.id, ['pending'], { state: 'declined', reason: reason!, updatedAt: now });
      } else {
        await r.railTransactions.transition(t.id, ['pending'], { state: 'confirmed', updatedAt: now, settledAt: now });
        await post(r, this.ctx, {
          walletId: t.walletId, type: 'topup', amountMinor: t.railAmountMinor, currency: 'USD',
          reference: `topup:${t.externalRef}`, memo: `top-up confirmed by ${treasuryProviderId}`,
        });
      }
      // announced in the same transaction as the credit (or the decline): docs/api/rails.md § Events
      const data: TopUpEventData = {
        transactionId: t.id, walletId: t.walletId, status: outcome, amountMinor: t.railAmountMinor.toString(), currency: t.railCurrency,
        creditedMinor: outcome === 'confirmed' ? t.railAmountMinor.toString() : '0', externalRef: t.externalRef!, treasuryProviderId, reason,
      };
      await recordEvent(r, this.ctx, t.tenantId, `topup.${outcome}`, data);
      return { transaction: railTransactionView((await r.railTransactions.get(t.id))!) };
    });
  }
}
