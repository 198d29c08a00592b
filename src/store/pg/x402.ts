import { and, asc, eq, inArray } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { x402Authorizations as t } from '../schema-pg/index.js';
import type { X402Authorization, X402AuthorizationPatch, X402AuthorizationRepo, X402AuthorizationState } from '../repos/x402.js';

export class PgX402Authorizations implements X402AuthorizationRepo {
  constructor(private db: NodePgDatabase) {}
  async insert(a: X402Authorization) { await this.db.insert(t).values(a); }
  async get(id: string) { return (await this.db.select().from(t).where(eq(t.id, id)))[0]; }
  async byNonce(network: string, asset: string, nonce: string) {
    return (await this.db.select().from(t).where(and(eq(t.network, network), eq(t.asset, asset), eq(t.nonce, nonce))))[0];
  }
  async transition(id: string, from: X402AuthorizationState[], patch: X402AuthorizationPatch) {
    return (await this.db.update(t).set(patch).where(and(eq(t.id, id), inArray(t.state, from))).returning({ id: t.id })).length === 1;
  }
  async update(id: string, patch: X402AuthorizationPatch) { await this.db.update(t).set(patch).where(eq(t.id, id)); }
  async listByState(states: X402AuthorizationState[], limit: number) {
    return this.db.select().from(t).where(inArray(t.state, states)).orderBy(asc(t.updatedAt), asc(t.id)).limit(limit);
  }
}
