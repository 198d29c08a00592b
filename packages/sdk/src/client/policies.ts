import type { HttpClient } from './http.js';
import type { Policy, PolicyEvaluateInput, PolicyEvaluation } from '../types.js';

/** Spending policies of the workspace (docs/api/policies.md); documents in docs/policy-language.md. */
export class PoliciesApi {
  constructor(private http: HttpClient) {}

  /** Applies a policy document: one new enabled policy per section, or 400 VALIDATION_FAILED (details.line, column, expected) and none. */
  apply(document: string): Promise<{ policies: Policy[] }> {
    return this.http.request('POST', '/v1/policies', { body: { document } });
  }
  /** Every policy of the workspace, disabled ones included, in the order they apply. */
  list(): Promise<{ policies: Policy[] }> {
    return this.http.request('GET', '/v1/policies');
  }
  enable(id: string): Promise<{ policy: Policy }> {
    return this.http.request('POST', `/v1/policies/${encodeURIComponent(id)}/enable`);
  }
  disable(id: string): Promise<{ policy: Policy }> {
    return this.http.request('POST', `/v1/policies/${encodeURIComponent(id)}/disable`);
  }
  /** What a purchase would meet now; a dry run that moves nothing and creates no approval. */
  evaluate(input: PolicyEvaluateInput): Promise<PolicyEvaluation> {
    return this.http.request('POST', '/v1/policies/evaluate', { body: input });
  }
}
