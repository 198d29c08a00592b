import type { HttpClient } from './http.js';
import type { CreateWalletInput } from '../contract/wallets.js';
import type { Balance, BreakerState, LedgerEntry, Wallet } from '../types.js';

export class WalletsApi {
  constructor(private http: HttpClient) {}

  async create(input: CreateWalletInput): Promise<Wallet> {
    return (await this.http.request<{ wallet: Wallet }>('POST', '/v1/wallets', { body: input })).wallet;
  }
  async list(): Promise<Wallet[]> {
    return (await this.http.request<{ wallets: Wallet[] }>('GET', '/v1/wallets')).wallets;
  }
  async get(id: string): Promise<Wallet> {
    return (await this.http.request<{ wallet: Wallet }>('GET', `/v1/wallets/${encodeURIComponent(id)}`)).wallet;
  }
  balance(id: string): Promise<Balance> {
    return this.http.request<Balance>('GET', `/v1/wallets/${encodeURIComponent(id)}/balance`);
  }
  async ledger(id: string): Promise<LedgerEntry[]> {
    return (await this.http.request<{ entries: LedgerEntry[] }>('GET', `/v1/wallets/${encodeURIComponent(id)}/ledger`)).entries;
  }
  fund(id: string, amountMinor: string, rail?: string): Promise<{ entry: LedgerEntry; balance: Balance }> {
    return this.http.request('POST', `/v1/wallets/${encodeURIComponent(id)}/fund`, { body: rail ? { amountMinor, rail } : { amountMinor } });
  }
  async freeze(id: string): Promise<Wallet> {
    return (await this.http.request<{ wallet: Wallet }>('POST', `/v1/wallets/${encodeURIComponent(id)}/freeze`)).wallet;
  }
  async unfreeze(id: string): Promise<Wallet> {
    return (await this.http.request<{ wallet: Wallet }>('POST', `/v1/wallets/${encodeURIComponent(id)}/unfreeze`)).wallet;
  }
  /** Lifts the breaker's pause of a seller for this wallet and resets its failure count. */
  resumeProvider(walletId: string, providerId: string): Promise<{ ok: true; paused: false }> {
    return this.http.request('POST', `/v1/wallets/${encodeURIComponent(walletId)}/resume-provider`, { body: { providerId } });
  }
  breaker(walletId: string, providerId: string): Promise<BreakerState> {
    return this.http.request('GET', `/v1/wallets/${encodeURIComponent(walletId)}/breaker/${encodeURIComponent(providerId)}`);
  }
}
