import type { X402Authorization, X402AuthorizationPatch, X402AuthorizationState } from '../repos/x402.js';
import type { Sql } from './sql.js';

export class X402Authorizations {
  private readonly t;
  constructor(c: Sql) { this.t = c.table('x402Authorizations'); }
  /** throws a unique violation when the network and token already have this nonce */
  insert(a: X402Authorization) { return this.t.insert(a); }
  get(id: string) { return this.t.first({ id }); }
  byNonce(network: string, asset: string, nonce: string) { return this.t.first({ network, asset, nonce }); }
  /**
   * changes the row only if it is in one of `from` (and, given `updatedAt`, was last changed then); false
   * when it is not (another got there first)
   */
  async transition(id: string, from: X402AuthorizationState[], patch: X402AuthorizationPatch, updatedAt?: number) {
    return (await this.t.update({ id, state: from, ...(updatedAt !== undefined ? { updatedAt } : {}) }, patch)) === 1;
  }
  async update(id: string, patch: X402AuthorizationPatch) { await this.t.update({ id }, patch); }
  listByState(states: X402AuthorizationState[], limit: number) { return this.t.all({ state: states }, 'ORDER BY updated_at, id LIMIT ?', [limit]); }
  /** settled rows not yet found confirmed on chain by the settlement duty, the oldest first */
  unreconciled(limit: number) { return this.t.all({ state: 'settled', reconciledAt: null }, 'ORDER BY updated_at, id LIMIT ?', [limit]); }
}
