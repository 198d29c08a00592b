/**
 * Money in and the rails: rail providers, top-ups, USDC deposit addresses, the testnet
 * faucet, rail transactions, events, and the sandbox controls. docs/api/rails.md.
 */
import type { HttpClient } from './http.js';
import type { Payout } from './payouts.js';
import type { Receipt } from '../types.js';
import type {
  DepositAddress, RailEvent, RailProviderList, RailTransaction, ReconciliationReport, SandboxSettings, SandboxSettingsInput, SandboxTopUpAnswer, TopUpIntent,
} from '../contract/rails.js';
import type { Session } from '../contract/sessions.js';

export type {
  Rail, TopUpIntent, DepositAddress, RailTransaction, RailEvent, RailProvider, RailProviderList, ScreeningHealth, ReconciliationReport, Discrepancy,
  SandboxSettings, SandboxTopUpAnswer,
} from '../contract/rails.js';
/** A processor's signed webhook as the sandbox returns it (the name the SDK has always used). */
export type { SignedWebhook as WebhookDelivery } from '../contract/rails.js';

const w = (id: string) => `/v1/wallets/${encodeURIComponent(id)}`;

export class RailApi {
  constructor(private http: HttpClient) {}

  /** `screening`: the sanctions screening's health, present when the gateway runs rails */
  providers(): Promise<RailProviderList> {
    return this.http.request('GET', '/v1/rail/providers');
  }
  /** Every deposit, top-up and payout on the caller's wallets, newest first. */
  transactions(opts: { kind?: RailTransaction['kind']; walletId?: string; limit?: number; after?: string } = {}): Promise<{ transactions: RailTransaction[]; nextCursor?: string }> {
    return this.http.request('GET', '/v1/rail/transactions', { query: { ...opts } });
  }
  /** The caller's events (alerts), newest first. */
  events(opts: { type?: string; limit?: number; after?: string } = {}): Promise<{ events: RailEvent[]; nextCursor?: string }> {
    return this.http.request('GET', '/v1/events', { query: { ...opts } });
  }
  /** A top-up intent; the wallet is credited when the processor confirms. */
  async topUp(walletId: string, input: { amountMinor: string; asset?: 'USD' | 'USDC'; treasuryProviderId?: string }): Promise<TopUpIntent> {
    return (await this.http.request<{ intent: TopUpIntent }>('POST', `${w(walletId)}/topup`, { body: input })).intent;
  }
  /** The wallet's USDC deposit address (made on first call; the same one afterwards). */
  async depositAddress(walletId: string, input: { asset?: 'USDC'; chain?: 'base'; treasuryProviderId?: string } = {}): Promise<DepositAddress> {
    return (await this.http.request<{ address: DepositAddress }>('POST', `${w(walletId)}/deposit-address`, { body: input })).address;
  }
  async depositAddresses(walletId: string): Promise<DepositAddress[]> {
    return (await this.http.request<{ addresses: DepositAddress[] }>('GET', `${w(walletId)}/deposit-addresses`)).addresses;
  }
  /** Testnets only: test USDC to the wallet's deposit address (DEPOSIT_HELD while the price is out of band). */
  async faucet(walletId: string, input: { address?: string } = {}): Promise<RailTransaction> {
    return (await this.http.request<{ transaction: RailTransaction }>('POST', `${w(walletId)}/faucet`, { body: input })).transaction;
  }
  /** The operator: reconcile the ledger with the rails now. */
  async reconcile(): Promise<ReconciliationReport> {
    return (await this.http.request<{ reconciliation: ReconciliationReport }>('POST', '/v1/rail/reconcile')).reconciliation;
  }
}

/** Sandbox gateways only: drive the simulated processor, chain and bank. */
export class SandboxApi {
  constructor(private http: HttpClient) {}

  /** The payer completes a top-up: the processor's signed webhook is delivered (and returned). */
  confirmTopUp(transactionId: string): Promise<SandboxTopUpAnswer> {
    return this.http.request('POST', `/v1/sandbox/topups/${encodeURIComponent(transactionId)}/confirm`);
  }
  declineTopUp(transactionId: string, reason?: string): Promise<SandboxTopUpAnswer> {
    return this.http.request('POST', `/v1/sandbox/topups/${encodeURIComponent(transactionId)}/decline`, reason ? { body: { reason } } : {});
  }
  /** USDC (base units) arrives at one of your deposit addresses on the sandbox chain. */
  async deposit(address: string, amountMinor: string, from?: string): Promise<RailTransaction> {
    return (await this.http.request<{ transaction: RailTransaction }>('POST', '/v1/sandbox/deposits', { body: { address, amountMinor, ...(from ? { from } : {}) } })).transaction;
  }
  /** Your authorized paid call (a seller's key) expires now, as at the end of its in-flight time: the buyer refunded, a failed receipt. */
  async expireTransaction(transactionId: string): Promise<Receipt> {
    return (await this.http.request<{ receipt: Receipt }>('POST', `/v1/sandbox/transactions/${encodeURIComponent(transactionId)}/expire`)).receipt;
  }
  /** Your open payment session (a seller's key) expires now, as at the end of its claim window: the rest released to the buyer. */
  async expireSession(sessionId: string): Promise<Session> {
    return (await this.http.request<{ session: Session }>('POST', `/v1/sandbox/sessions/${encodeURIComponent(sessionId)}/expire`)).session;
  }
  confirmPayout(payoutId: string): Promise<{ payout: Payout }> {
    return this.http.request('POST', `/v1/sandbox/payouts/${encodeURIComponent(payoutId)}/confirm`);
  }
  returnPayout(payoutId: string, reason?: string): Promise<{ payout: Payout }> {
    return this.http.request('POST', `/v1/sandbox/payouts/${encodeURIComponent(payoutId)}/return`, reason ? { body: { reason } } : {});
  }
  /** The operator: price, outages, screening list, treasury shortfall. */
  async settings(): Promise<SandboxSettings> {
    return (await this.http.request<{ settings: SandboxSettings }>('GET', '/v1/sandbox/settings')).settings;
  }
  async update(patch: SandboxSettingsInput): Promise<SandboxSettings> {
    return (await this.http.request<{ settings: SandboxSettings }>('POST', '/v1/sandbox/settings', { body: patch })).settings;
  }
}
