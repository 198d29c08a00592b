import { and, asc, eq, inArray, lte, sql } from 'drizzle-orm';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { capabilities, capabilityVersions, verificationRequests, ratings, tenants } from '../schema/index.js';
import type {
  Capability, CapabilityRepo, DiscoverableFilter, CapabilityVersion, CapabilityVersionRepo, CapabilitySearchRepo,
  VerificationRequest, VerificationRequestRepo, Rating, RatingRepo,
} from '../repos/market.js';
import { statementsFor, type TableStatements } from './statements.js';

type Db = BetterSQLite3Database;

export class SqliteCapabilities implements CapabilityRepo {
  private readonly s: TableStatements<typeof capabilities>;
  constructor(private db: Db) { this.s = statementsFor(db, capabilities); }
  async insert(c: Capability) { this.db.insert(capabilities).values(c).run(); }
  async get(id: string) { return this.s.first({ id }); }
  async update(id: string, patch: Partial<Capability>) { this.db.update(capabilities).set(patch).where(eq(capabilities.id, id)).run(); }
  async listByProvider(providerId: string) {
    return this.db.select().from(capabilities).where(eq(capabilities.providerId, providerId)).orderBy(asc(capabilities.createdAt), asc(capabilities.id)).all();
  }
  async listDiscoverable(filter: DiscoverableFilter = {}) {
    if (filter.ids?.length === 0) return [];
    return this.db.select({ c: capabilities }).from(capabilities).innerJoin(tenants, eq(tenants.id, capabilities.providerId))
      .where(discoverable(filter)).orderBy(asc(capabilities.id)).all().map((r) => r.c);
  }
}

/**
 * What discovery may show, as one SQL condition over `capabilities` joined to its seller in
 * `tenants`: active listings of verified, active sellers that pass the filter. Both the
 * candidate list and the full-text match use it, so the match's ceiling counts only listings
 * that could be shown (an unverified seller's listings cannot crowd the others out).
 */
function discoverable(filter: DiscoverableFilter) {
  const conds = [eq(capabilities.status, 'active'), eq(tenants.status, 'active'), eq(tenants.verified, true)];
  if (filter.ids) conds.push(inArray(capabilities.id, filter.ids));
  if (filter.category !== undefined) conds.push(eq(capabilities.category, filter.category));
  if (filter.protocol !== undefined) conds.push(eq(capabilities.protocol, filter.protocol));
  if (filter.maxPriceMinor !== undefined) conds.push(lte(capabilities.priceMinor, filter.maxPriceMinor));
  // NULL latency never satisfies the comparison: an unknown latency is not under any ceiling
  if (filter.maxLatencyMs !== undefined) conds.push(lte(capabilities.latencyP50Ms, filter.maxLatencyMs));
  return and(...conds);
}

export class SqliteCapabilityVersions implements CapabilityVersionRepo {
  constructor(private db: Db) {}
  async insert(v: CapabilityVersion) { this.db.insert(capabilityVersions).values(v).run(); }
  async get(id: string) { return this.db.select().from(capabilityVersions).where(eq(capabilityVersions.id, id)).get(); }
  async getMany(ids: string[]) {
    if (ids.length === 0) return [];
    return this.db.select().from(capabilityVersions).where(inArray(capabilityVersions.id, ids)).all();
  }
  async listByCapability(capabilityId: string) {
    return this.db.select().from(capabilityVersions).where(eq(capabilityVersions.capabilityId, capabilityId)).orderBy(asc(capabilityVersions.createdAt)).all();
  }
}

/** FTS5 is SQLite's; a PostgreSQL adapter implements the same interface with tsvector. */
export class SqliteCapabilitySearch implements CapabilitySearchRepo {
  constructor(private db: Db) {}
  async upsert(doc: { capabilityId: string; name: string; description: string; tags: string[]; category: string }) {
    this.db.run(sql`DELETE FROM capability_search WHERE capability_id = ${doc.capabilityId}`);
    this.db.run(sql`INSERT INTO capability_search (capability_id, name, description, tags, category)
      VALUES (${doc.capabilityId}, ${doc.name}, ${doc.description}, ${doc.tags.join(' ')}, ${doc.category})`);
  }
  async remove(capabilityId: string) {
    this.db.run(sql`DELETE FROM capability_search WHERE capability_id = ${capabilityId}`);
  }
  async match(query: string, limit: number, filter: Omit<DiscoverableFilter, 'ids'> = {}) {
    const expr = toFtsQuery(query);
    if (!expr) return [];
    // weights: name, description, tags, category (capability_id is unindexed)
    const rows = this.db.all<{ capability_id: string; rank: number }>(sql`
      SELECT capability_search.capability_id AS capability_id, bm25(capability_search, 0.0, 4.0, 1.0, 2.0, 2.0) AS rank
      FROM capability_search
      JOIN ${capabilities} ON ${capabilities.id} = capability_search.capability_id
      JOIN ${tenants} ON ${tenants.id} = ${capabilities.providerId}
      WHERE capability_search MATCH ${expr} AND ${discoverable(filter)}
      ORDER BY rank LIMIT ${limit}`);
    return rows.map((r) => ({ capabilityId: r.capability_id, rank: Number(r.rank) }));
  }
}

/**
 * Natural-language text to an FTS5 query: words become quoted prefix terms joined by
 * OR, so punctuation in user text can never be FTS syntax and BM25 ranks by how many
 * and how rare the matched words are.
 */
export function toFtsQuery(text: string): string {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const unique = [...new Set(words)].slice(0, 32);
  return unique.map((w) => `"${w}"*`).join(' OR ');
}

export class SqliteVerificationRequests implements VerificationRequestRepo {
  constructor(private db: Db) {}
  async insert(v: VerificationRequest) { this.db.insert(verificationRequests).values(v).run(); }
  async latestForProvider(providerId: string) {
    return this.db.select().from(verificationRequests).where(eq(verificationRequests.providerId, providerId))
      .orderBy(sql`${verificationRequests.requestedAt} DESC`, sql`rowid DESC`).limit(1).get();
  }
  async update(id: string, patch: Partial<VerificationRequest>) { this.db.update(verificationRequests).set(patch).where(eq(verificationRequests.id, id)).run(); }
  async listByStatus(status: VerificationRequest['status']) {
    return this.db.select().from(verificationRequests).where(eq(verificationRequests.status, status)).orderBy(asc(verificationRequests.requestedAt)).all();
  }
}

export class SqliteRatings implements RatingRepo {
  constructor(private db: Db) {}
  async insert(r: Rating) { this.db.insert(ratings).values(r).run(); }
  async byTransaction(transactionId: string) { return this.db.select().from(ratings).where(eq(ratings.transactionId, transactionId)).get(); }
  async summary(providerIds: string[]) {
    const out = new Map<string, { count: number; sum: number }>();
    if (providerIds.length === 0) return out;
    const rows = this.db.select({ providerId: ratings.providerId, count: sql<bigint>`count(*)`, sum: sql<bigint>`sum(${ratings.rating})` })
      .from(ratings).where(inArray(ratings.providerId, providerIds)).groupBy(ratings.providerId).all();
    for (const r of rows) out.set(r.providerId, { count: Number(r.count), sum: Number(r.sum) });
    return out;
  }
}
