/**
 * Accounts: log in for a new 30-day key, and password recovery. Public routes: no API
 * key is sent. Each method resolves to the response body as the gateway sends it.
 */
import type { HttpClient } from './http.js';
import type { LoginResult } from '../types.js';

export class AccountsApi {
  constructor(private http: HttpClient) {}

  /** `POST /v1/accounts/login` → `{tenant, apiKey}`; a wrong email or password is 401 UNAUTHORIZED. */
  login(input: { email: string; password: string }): Promise<LoginResult> {
    return this.http.request('POST', '/v1/accounts/login', { body: { email: input.email, password: input.password }, apiKey: null });
  }

  /** `POST /v1/accounts/password/forgot` → `{ok: true, token?}`, whether or not the email has an account. */
  forgotPassword(input: { email: string }): Promise<{ ok: true; token?: string }> {
    return this.http.request('POST', '/v1/accounts/password/forgot', { body: { email: input.email }, apiKey: null });
  }

  /** `POST /v1/accounts/password/reset` → `{ok: true}`; the token works once. */
  resetPassword(input: { token: string; password: string }): Promise<{ ok: true }> {
    return this.http.request('POST', '/v1/accounts/password/reset', { body: { token: input.token, password: input.password }, apiKey: null });
  }
}
