import { and, asc, desc, eq, inArray, lte, sql } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { capabilities, capabilityVersions, verificationRequests, ratings, tenants } from '../schema-pg/index.js';
import type {
  Capability, CapabilityRepo, DiscoverableFilter, CapabilityVersion, CapabilityVersionRepo, CapabilitySearchRepo,
  VerificationRequest, VerificationRequestRepo, Rating, RatingRepo,
} from '../repos/market.js';
import { run, TableSql, type Session } from './sql.js';

type Db = NodePgDatabase;

const C = new TableSql<Capability>(capabilities);
const CAPABILITY_GET = `SELECT ${C.columns} FROM capabilities WHERE id = $1`;

export class PgCapabilities implements CapabilityRepo {
  constructor(private db: Db, private s: Session) {}
  async insert(c: Capability) { await this.db.insert(capabilities).values(c); }
  async get(id: string) { return C.first(await run(this.s, 'capability_get', CAPABILITY_GET, [id])); }
  async update(id: string, patch: Partial<Capability>) { await this.db.update(capabilities).set(patch).where(eq(capabilities.id, id)); }
  async listByProvider(providerId: string) {
    return this.db.select().from(capabilities).where(eq(capabilities.providerId, providerId)).orderBy(asc(capabilities.createdAt), asc(capabilities.id));
  }
  async listDiscoverable(filter: DiscoverableFilter = {}) {
    if (filter.ids?.length === 0) return [];
    const rows = await this.db.select({ c: capabilities }).from(capabilities).innerJoin(tenants, eq(tenants.id, capabilities.providerId))
      .where(discoverable(filter)).orderBy(asc(capabilities.id));
    return rows.map((r) => r.c);
  }
}

/** What discovery may show (src/store/sqlite/market.ts discoverable(): the same condition). */
export function discoverable(filter: DiscoverableFilter) {
  const conds = [eq(capabilities.status, 'active'), eq(tenants.status, 'active'), eq(tenants.verified, true)];
  if (filter.ids) conds.push(inArray(capabilities.id, filter.ids));
  if (filter.category !== undefined) conds.push(eq(capabilities.category, filter.category));
  if (filter.protocol !== undefined) conds.push(eq(capabilities.protocol, filter.protocol));
  if (filter.maxPriceMinor !== undefined) conds.push(lte(capabilities.priceMinor, filter.maxPriceMinor));
  if (filter.maxLatencyMs !== undefined) conds.push(lte(capabilities.latencyP50Ms, filter.maxLatencyMs));
  return and(...conds);
}

export class PgCapabilityVersions implements CapabilityVersionRepo {
  constructor(private db: Db) {}
  async insert(v: CapabilityVersion) { await this.db.insert(capabilityVersions).values(v); }
  async get(id: string) { return (await this.db.select().from(capabilityVersions).where(eq(capabilityVersions.id, id)))[0]; }
  async getMany(ids: string[]) {
    if (ids.length === 0) return [];
    return this.db.select().from(capabilityVersions).where(inArray(capabilityVersions.id, ids));
  }
  async listByCapability(capabilityId: string) {
    return this.db.select().from(capabilityVersions).where(eq(capabilityVersions.capabilityId, capabilityId)).orderBy(asc(capabilityVersions.createdAt), asc(capabilityVersions.id));
  }
}

/**
 * Full text with a tsvector (the FTS5 table's counterpart): name weighted A, tags and category
 * B, description C, English stemming; a query's words are prefix terms joined by OR, as
 * toFtsQuery builds them for SQLite. `rank` is the negated sum of each word's ts_rank weighed by
 * its rarity (BM25's idf), so lower is better as with SQLite's bm25 (the domain flips it).
 */
export class PgCapabilitySearch implements CapabilitySearchRepo {
  constructor(private db: Db) {}
  async upsert(doc: { capabilityId: string; name: string; description: string; tags: string[]; category: string }) {
    await this.db.execute(sql`
      INSERT INTO capability_search (capability_id, doc) VALUES (${doc.capabilityId},
        setweight(to_tsvector('english', ${doc.name}), 'A') || setweight(to_tsvector('english', ${doc.tags.join(' ')}), 'B')
        || setweight(to_tsvector('english', ${doc.category}), 'B') || setweight(to_tsvector('english', ${doc.description}), 'C'))
      ON CONFLICT (capability_id) DO UPDATE SET doc = EXCLUDED.doc`);
  }
  async remove(capabilityId: string) {
    await this.db.execute(sql`DELETE FROM capability_search WHERE capability_id = ${capabilityId}`);
  }
  async match(query: string, limit: number, filter: Omit<DiscoverableFilter, 'ids'> = {}) {
    const words = [...new Set(query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])].slice(0, 32);
    if (words.length === 0) return [];
    // each word is letters and digits only, so it can never be tsquery syntax
    const terms = words.map((w) => `${w}:*`);
    const expr = terms.join(' | ');
    // ts_rank knows no document frequency; BM25 (SQLite's FTS5) weighs each word by its rarity. So
    // each word's ts_rank is weighed by FTS5's idf, ln((N - n + 0.5) / (n + 0.5)) (at least 1e-6),
    // N the indexed documents, n those holding the word: a match on a rare word outranks a match
    // on a common one, on both backends.
    const rows = await this.db.execute<{ capability_id: string; rank: number }>(sql`
      WITH total AS (SELECT count(*)::float8 AS n FROM capability_search),
      weighted AS (
        SELECT t.tq, greatest(1e-6, ln((total.n - df.n + 0.5) / (df.n + 0.5))) AS idf
        FROM (SELECT to_tsquery('english', term) AS tq FROM unnest(${sql.param(terms)}::text[]) AS term) t
        CROSS JOIN total
        CROSS JOIN LATERAL (SELECT count(*)::float8 AS n FROM capability_search d WHERE d.doc @@ t.tq) df)
      SELECT s.capability_id AS capability_id,
        -(SELECT coalesce(sum(weighted.idf * ts_rank('{0.2, 0.4, 0.4, 1.0}', s.doc, weighted.tq)), 0) FROM weighted) * 10 AS rank
      FROM capability_search s CROSS JOIN to_tsquery('english', ${expr}) q
      JOIN ${capabilities} ON ${capabilities.id} = s.capability_id
      JOIN ${tenants} ON ${tenants.id} = ${capabilities.providerId}
      WHERE s.doc @@ q AND ${discoverable(filter)}
      ORDER BY rank, s.capability_id LIMIT ${limit}`);
    return rows.rows.map((r) => ({ capabilityId: r.capability_id, rank: Number(r.rank) }));
  }
}

export class PgVerificationRequests implements VerificationRequestRepo {
  constructor(private db: Db) {}
  async insert(v: VerificationRequest) { await this.db.insert(verificationRequests).values(v); }
  async latestForProvider(providerId: string) {
    return (await this.db.select().from(verificationRequests).where(eq(verificationRequests.providerId, providerId))
      .orderBy(desc(verificationRequests.requestedAt), desc(sql`verification_requests.rowid`)).limit(1))[0];
  }
  async update(id: string, patch: Partial<VerificationRequest>) { await this.db.update(verificationRequests).set(patch).where(eq(verificationRequests.id, id)); }
  async listByStatus(status: VerificationRequest['status']) {
    return this.db.select().from(verificationRequests).where(eq(verificationRequests.status, status)).orderBy(asc(verificationRequests.requestedAt), asc(sql`verification_requests.rowid`));
  }
}

export class PgRatings implements RatingRepo {
  constructor(private db: Db) {}
  async insert(r: Rating) { await this.db.insert(ratings).values(r); }
  async byTransaction(transactionId: string) { return (await this.db.select().from(ratings).where(eq(ratings.transactionId, transactionId)))[0]; }
  async summary(providerIds: string[]) {
    const out = new Map<string, { count: number; sum: number }>();
    if (providerIds.length === 0) return out;
    const rows = await this.db.select({ providerId: ratings.providerId, count: sql<string>`count(*)::text`, sum: sql<string>`sum(${ratings.rating})::text` })
      .from(ratings).where(inArray(ratings.providerId, providerIds)).groupBy(ratings.providerId);
    for (const r of rows) out.set(r.providerId, { count: Number(r.count), sum: Number(r.sum) });
    return out;
  }
}
