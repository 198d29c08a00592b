/** Receipts: a workspace key reads its purchases, a provider key its sales. */
import type { HttpClient } from './http.js';
import type { Receipt, ReceiptPage } from '../types.js';

export class ReceiptsApi {
  constructor(private http: HttpClient) {}

  /** Newest first; pass the page's `nextCursor` as `after` for the next page (present only on full pages). */
  list(opts: { limit?: number; after?: string } = {}): Promise<ReceiptPage> {
    return this.http.request('GET', '/v1/receipts', { query: { limit: opts.limit, after: opts.after } });
  }
  async get(id: string): Promise<Receipt> {
    return (await this.http.request<{ receipt: Receipt }>('GET', `/v1/receipts/${encodeURIComponent(id)}`)).receipt;
  }
  /** Every receipt of a transaction (a failed call can have more than one). */
  async forTransaction(transactionId: string): Promise<Receipt[]> {
    return (await this.http.request<{ receipts: Receipt[] }>('GET', `/v1/transactions/${encodeURIComponent(transactionId)}/receipts`)).receipts;
  }
}
