import type { Capability, DiscoverableFilter, CapabilityVersion, VerificationRequest, Rating } from '../repos/market.js';
import type { Sql } from './sql.js';

export class Capabilities {
  private readonly t;
  constructor(private readonly c: Sql) { this.t = c.table('capabilities'); }
  insert(c: Capability) { return this.t.insert(c); }
  get(id: string) { return this.t.first({ id }); }
  async update(id: string, patch: Partial<Omit<Capability, 'id' | 'providerId' | 'protocol' | 'toolName' | 'createdAt'>>) { await this.t.update({ id }, patch); }
  listByProvider(providerId: string) { return this.t.all({ providerId }, 'ORDER BY created_at, id'); }
  /** active capabilities of verified, active providers, narrowed by the filter, ordered by id */
  async listDiscoverable(filter: DiscoverableFilter = {}) {
    if (filter.ids?.length === 0) return [];
    const d = discoverable(this.c, filter);
    const rows = await this.c.rows(`SELECT ${this.t.columns('c')} FROM capabilities c JOIN tenants t ON t.id = c.provider_id WHERE ${d.text} ORDER BY c.id`, d.values);
    return rows.map((r) => this.t.row(r));
  }
}

/**
 * What discovery may show, as one SQL condition over `capabilities c` joined to its seller in
 * `tenants t`: active listings of verified, active sellers that pass the filter. Both the
 * candidate list and the full-text match use it, so the match's ceiling counts only listings
 * that could be shown (an unverified seller's listings cannot crowd the others out).
 */
function discoverable(c: Sql, f: DiscoverableFilter): { text: string; values: unknown[] } {
  const conds = [`c.status = 'active' AND t.status = 'active' AND t.verified = ?`];
  const values: unknown[] = [true];
  const add = (cond: string, v: unknown) => { conds.push(cond); values.push(v); };
  if (f.ids) add(c.anyOf('c.id'), c.list(f.ids));
  if (f.category !== undefined) add('c.category = ?', f.category);
  if (f.protocol !== undefined) add('c.protocol = ?', f.protocol);
  if (f.maxPriceMinor !== undefined) add('c.price_minor <= ?', f.maxPriceMinor);
  // NULL latency never satisfies the comparison: an unknown latency is not under any ceiling
  if (f.maxLatencyMs !== undefined) add('c.latency_p50_ms <= ?', f.maxLatencyMs);
  return { text: conds.join(' AND '), values };
}

export class CapabilityVersions {
  private readonly t;
  constructor(c: Sql) { this.t = c.table('capabilityVersions'); }
  insert(v: CapabilityVersion) { return this.t.insert(v); }
  get(id: string) { return this.t.first({ id }); }
  async getMany(ids: string[]): Promise<CapabilityVersion[]> { return ids.length === 0 ? [] : this.t.all({ id: ids }); }
  listByCapability(capabilityId: string) { return this.t.all({ capabilityId }, 'ORDER BY created_at, id'); }
}

type SearchDoc = { capabilityId: string; name: string; description: string; tags: string[]; category: string };

/** A query's words: letters and digits only (never FTS5 or tsquery syntax), each once, at most 32. */
const wordsOf = (text: string) => [...new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])].slice(0, 32);

/**
 * Natural-language text to an FTS5 query: words become quoted prefix terms joined by
 * OR, so punctuation in user text can never be FTS syntax and BM25 ranks by how many
 * and how rare the matched words are.
 */
export function toFtsQuery(text: string): string {
  return wordsOf(text).map((w) => `"${w}"*`).join(' OR ');
}

/**
 * Full-text index over name, description, tags and category.
 *
 * Dialect switch, full-text search: SQLite's FTS5 table (BM25 by `bm25()`) and PostgreSQL's
 * tsvector (name weighted A, tags and category B, description C, English stemming; a query's
 * words are prefix terms joined by OR, as toFtsQuery builds them for SQLite). `rank` is lower
 * for better on both: PostgreSQL's is the negated sum of each word's ts_rank weighed by its rarity
 * (BM25's idf), so that a match on a rare word outranks a match on a common one there too.
 */
export class CapabilitySearch {
  constructor(private readonly c: Sql) {}
  async upsert(doc: SearchDoc) {
    const tags = doc.tags.join(' ');
    if (this.c.dialect === 'sqlite') {
      await this.remove(doc.capabilityId);
      await this.c.run('INSERT INTO capability_search (capability_id, name, description, tags, category) VALUES (?, ?, ?, ?, ?)',
        [doc.capabilityId, doc.name, doc.description, tags, doc.category]);
      return;
    }
    await this.c.run(`INSERT INTO capability_search (capability_id, doc) VALUES (?,
        setweight(to_tsvector('english', ?), 'A') || setweight(to_tsvector('english', ?), 'B')
        || setweight(to_tsvector('english', ?), 'B') || setweight(to_tsvector('english', ?), 'C'))
      ON CONFLICT (capability_id) DO UPDATE SET doc = EXCLUDED.doc`, [doc.capabilityId, doc.name, tags, doc.category, doc.description]);
  }
  async remove(capabilityId: string) { await this.c.run('DELETE FROM capability_search WHERE capability_id = ?', [capabilityId]); }
  /**
   * The best `limit` matches for a free-text query among the listings discovery may show (active,
   * of a verified active seller, passing `filter`), best first; `rank` is BM25 (lower is better, as
   * SQLite reports it)
   */
  async match(query: string, limit: number, filter: Omit<DiscoverableFilter, 'ids'> = {}) {
    const words = wordsOf(query);
    if (words.length === 0) return [];
    const d = discoverable(this.c, filter);
    const rows = this.c.dialect === 'sqlite'
      // weights: name, description, tags, category (capability_id is unindexed)
      ? await this.c.rows(`SELECT capability_search.capability_id, bm25(capability_search, 0.0, 4.0, 1.0, 2.0, 2.0) AS rank
          FROM capability_search
          JOIN capabilities c ON c.id = capability_search.capability_id
          JOIN tenants t ON t.id = c.provider_id
          WHERE capability_search MATCH ? AND ${d.text}
          ORDER BY rank LIMIT ?`, [toFtsQuery(query), ...d.values, limit])
      // ts_rank knows no document frequency: each word's is weighed by FTS5's idf,
      // ln((N - n + 0.5) / (n + 0.5)) (at least 1e-6), N the indexed documents, n those holding the word
      : await this.c.rows(`WITH total AS (SELECT count(*)::float8 AS n FROM capability_search),
          weighted AS (
            SELECT w.tq, greatest(1e-6, ln((total.n - df.n + 0.5) / (df.n + 0.5))) AS idf
            FROM (SELECT to_tsquery('english', term) AS tq FROM unnest(?::text[]) AS term) w
            CROSS JOIN total
            CROSS JOIN LATERAL (SELECT count(*)::float8 AS n FROM capability_search x WHERE x.doc @@ w.tq) df)
          SELECT s.capability_id,
            -(SELECT coalesce(sum(weighted.idf * ts_rank('{0.2, 0.4, 0.4, 1.0}', s.doc, weighted.tq)), 0) FROM weighted) * 10 AS rank
          FROM capability_search s CROSS JOIN to_tsquery('english', ?) q
          JOIN capabilities c ON c.id = s.capability_id
          JOIN tenants t ON t.id = c.provider_id
          WHERE s.doc @@ q AND ${d.text}
          ORDER BY rank, s.capability_id LIMIT ?`, [words.map((w) => `${w}:*`), words.map((w) => `${w}:*`).join(' | '), ...d.values, limit]);
    return rows.map((r) => ({ capabilityId: r[0] as string, rank: Number(r[1]) }));
  }
}

export class VerificationRequests {
  private readonly t;
  constructor(c: Sql) { this.t = c.table('verificationRequests'); }
  insert(v: VerificationRequest) { return this.t.insert(v); }
  latestForProvider(providerId: string) { return this.t.first({ providerId }, 'ORDER BY requested_at DESC, rowid DESC'); }
  async update(id: string, patch: Partial<Omit<VerificationRequest, 'id' | 'providerId'>>) { await this.t.update({ id }, patch); }
  listByStatus(status: VerificationRequest['status']) { return this.t.all({ status }, 'ORDER BY requested_at, rowid'); }
}

export class Ratings {
  private readonly t;
  constructor(private readonly c: Sql) { this.t = c.table('ratings'); }
  insert(r: Rating) { return this.t.insert(r); }
  byTransaction(transactionId: string) { return this.t.first({ transactionId }); }
  /** count and sum of ratings per provider */
  async summary(providerIds: string[]) {
    const out = new Map<string, { count: number; sum: number }>();
    if (providerIds.length === 0) return out;
    const rows = await this.c.rows(`SELECT provider_id, count(*), sum(rating) FROM ratings WHERE ${this.c.anyOf('provider_id')} GROUP BY provider_id`, [this.c.list(providerIds)]);
    for (const r of rows) out.set(r[0] as string, { count: Number(r[1]), sum: Number(r[2]) });
    return out;
  }
}
