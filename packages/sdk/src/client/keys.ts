/**
 * API keys of the client's tenant. Each method resolves to the response body as the
 * gateway sends it: `create` → `{apiKey}`, `list` → `{keys}`, `revoke` → `{key, revokedCount, revokedKeyIds}`.
 */
import type { HttpClient } from './http.js';
import type { ApiKeyView, CreateKeyInput, CreatedApiKey, RevokedKeys } from '../types.js';

export class KeysApi {
  constructor(private http: HttpClient) {}

  /**
   * `POST /v1/auth/keys` (keys:write) → `{apiKey}` with the key itself, shown only here.
   * Scopes must be a subset of this client's key's (403 FORBIDDEN otherwise);
   * `{preset: 'agent'}` makes a key for a buying agent, which cannot approve spend.
   * The new key expires when this client's key does, or earlier (`expiresAt`,
   * `expiresInSeconds`); a later expiry is 400 VALIDATION_FAILED. Past the tenant's cap of
   * active keys, 409 CONFLICT (`details.reason: 'key_limit_reached'`).
   */
  create(input: CreateKeyInput = {}): Promise<{ apiKey: CreatedApiKey }> {
    return this.http.request('POST', '/v1/auth/keys', { body: input });
  }

  /** `GET /v1/auth/keys` (keys:read) → `{keys}`: this tenant's keys, revoked ones included, never key material. */
  list(): Promise<{ keys: ApiKeyView[] }> {
    return this.http.request('GET', '/v1/auth/keys');
  }

  /**
   * `POST /v1/auth/keys/:id/revoke` (keys:write) → `{key, revokedCount, revokedKeyIds}`: the
   * key and every key made from it (and from those) get 401 from then on.
   */
  revoke(id: string): Promise<RevokedKeys> {
    return this.http.request('POST', `/v1/auth/keys/${encodeURIComponent(id)}/revoke`);
  }
}
