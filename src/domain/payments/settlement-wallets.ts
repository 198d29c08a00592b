/**
 * The wallet a provider's sales are credited to: its settlement wallet, fixed when the provider is
 * created (src/domain/tenancy/tenants.ts) and never changed. Each process remembers it after
 * reading it once, so completing a paid call reads nothing for it afterwards. Bounded: past `max`
 * providers the oldest is forgotten (and read again when needed).
 */
export class SettlementWallets {
  private readonly byProvider = new Map<string, string>();

  constructor(private readonly max = 10_000) {}

  /** The provider's settlement wallet, if this process has read it before. */
  of(providerId: string): string | undefined {
    return this.byProvider.get(providerId);
  }

  remember(providerId: string, walletId: string): void {
    if (this.byProvider.has(providerId)) return;
    if (this.byProvider.size >= this.max) this.byProvider.delete(this.byProvider.keys().next().value!);
    this.byProvider.set(providerId, walletId);
  }
}
