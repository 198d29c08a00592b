import { and, asc, eq, inArray } from 'drizzle-orm';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { x402Authorizations as t } from '../schema/index.js';
import type { X402Authorization, X402AuthorizationPatch, X402AuthorizationRepo, X402AuthorizationState } from '../repos/x402.js';

export class SqliteX402Authorizations implements X402AuthorizationRepo {
  constructor(private db: BetterSQLite3Database) {}
  async insert(a: X402Authorization) { this.db.insert(t).values(a).run(); }
  async get(id: string) { return this.db.select().from(t).where(eq(t.id, id)).get(); }
  async byNonce(network: string, asset: string, nonce: string) {
    return this.db.select().from(t).where(and(eq(t.network, network), eq(t.asset, asset), eq(t.nonce, nonce))).get();
  }
  async transition(id: string, from: X402AuthorizationState[], patch: X402AuthorizationPatch) {
    return this.db.update(t).set(patch).where(and(eq(t.id, id), inArray(t.state, from))).run().changes === 1;
  }
  async update(id: string, patch: X402AuthorizationPatch) { this.db.update(t).set(patch).where(eq(t.id, id)).run(); }
  async listByState(states: X402AuthorizationState[], limit: number) {
    return this.db.select().from(t).where(inArray(t.state, states)).orderBy(asc(t.updatedAt), asc(t.id)).limit(limit).all();
  }
}
