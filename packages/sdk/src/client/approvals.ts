import type { HttpClient } from './http.js';
import type { Approval, ApprovalStatus } from '../types.js';

/** Purchases held for a person, and the person's decision (docs/api/policies.md § Approvals). */
export class ApprovalsApi {
  constructor(private http: HttpClient) {}

  /** Newest first, optionally only those with one status. */
  list(filter: { status?: ApprovalStatus } = {}, opts: { signal?: AbortSignal } = {}): Promise<{ approvals: Approval[] }> {
    return this.http.request('GET', '/v1/approvals', { query: { status: filter.status }, ...(opts.signal ? { signal: opts.signal } : {}) });
  }
  get(id: string, opts: { signal?: AbortSignal } = {}): Promise<{ approval: Approval }> {
    return this.http.request('GET', `/v1/approvals/${encodeURIComponent(id)}`, opts.signal ? { signal: opts.signal } : {});
  }
  /** Needs approvals:write, which agent keys do not hold. A decision is final (409 CONFLICT after). */
  approve(id: string, input: { resolvedBy?: string } = {}): Promise<{ approval: Approval }> {
    return this.http.request('POST', `/v1/approvals/${encodeURIComponent(id)}/approve`, input.resolvedBy !== undefined ? { body: input } : {});
  }
  deny(id: string, input: { resolvedBy?: string } = {}): Promise<{ approval: Approval }> {
    return this.http.request('POST', `/v1/approvals/${encodeURIComponent(id)}/deny`, input.resolvedBy !== undefined ? { body: input } : {});
  }
}
