/**
 * Signup: start, verify with the mailed token, resend, status. Public routes: no API
 * key is sent. Each method resolves to the response body as the gateway sends it.
 */
import type { HttpClient } from './http.js';
import type { SignupInput, SignupRecord, SignupStarted, SignupVerified } from '../types.js';

export class SignupApi {
  constructor(private http: HttpClient) {}

  /** `POST /v1/signup` → `{signup, token?}`; `token` only with --dev-echo-tokens, otherwise it is mailed. */
  start(input: SignupInput): Promise<SignupStarted> {
    return this.http.request('POST', '/v1/signup', { body: input, apiKey: null });
  }

  /** `POST /v1/signup/verify` → `{tenant, apiKey}`: the new tenant and its first key (shown once). */
  verify(input: { signupId: string; token: string }): Promise<SignupVerified> {
    return this.http.request('POST', '/v1/signup/verify', { body: { signupId: input.signupId, token: input.token }, apiKey: null });
  }

  /** `POST /v1/signup/resend` → `{signup, token?}`; the previous token stops working. */
  resend(signupId: string): Promise<SignupStarted> {
    return this.http.request('POST', '/v1/signup/resend', { body: { signupId }, apiKey: null });
  }

  /** `GET /v1/signup/:id` → `{signup}`. */
  get(id: string): Promise<{ signup: SignupRecord }> {
    return this.http.request('GET', `/v1/signup/${encodeURIComponent(id)}`, { apiKey: null });
  }
}
