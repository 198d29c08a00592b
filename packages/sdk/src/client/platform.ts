import type { HttpClient } from './http.js';
import type { Health, PlatformPublicKey, ReceiptKey } from '../types.js';
import type { Activity, ActivityBucketSize } from '../contract/platform.js';

export class PlatformApi {
  constructor(private http: HttpClient) {}

  health(): Promise<Health> {
    return this.http.request('GET', '/health', { apiKey: null });
  }
  publicKey(): Promise<PlatformPublicKey> {
    return this.http.request('GET', '/v1/platform/public-key', { apiKey: null });
  }
  receiptKey(keyId: string): Promise<ReceiptKey> {
    return this.http.request('GET', `/v1/platform/receipt-keys/${encodeURIComponent(keyId)}`, { apiKey: null });
  }
  /** Operator key only. */
  rotateKeys(): Promise<PlatformPublicKey> {
    return this.http.request('POST', '/v1/platform/keys/rotate');
  }
  /** Operator key only: paid, failed and expired calls per hour or day, with amounts and fees (docs/api/platform.md). */
  activity(opts: { bucket?: ActivityBucketSize; from?: string; to?: string } = {}): Promise<Activity> {
    return this.http.request('GET', '/v1/platform/activity', { query: { ...opts } });
  }
}
