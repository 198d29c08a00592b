/**
 * Identity of the client's key. Any valid key may call these, whatever its scopes.
 * Each method resolves to the response body as the gateway sends it.
 */
import type { HttpClient } from './http.js';
import type { AuthScopes, AuthSelf, Whoami } from '../types.js';

export class AuthApi {
  constructor(private http: HttpClient) {}

  /** `GET /v1/whoami` → `{tenant, key}`: the way to check a key. */
  whoami(): Promise<Whoami> {
    return this.http.request('GET', '/v1/whoami');
  }

  /** `GET /v1/auth/self` → `{key, tenant: {id, kind}}`. */
  self(): Promise<AuthSelf> {
    return this.http.request('GET', '/v1/auth/self');
  }

  /** `GET /v1/auth/scopes` → `{scopes, available}`: this key's scopes, and all a key of this tenant kind may hold. */
  scopes(): Promise<AuthScopes> {
    return this.http.request('GET', '/v1/auth/scopes');
  }
}
