/**
 * Test cases derived from the running app's route table (src/gateway/plugins/route-table.ts),
 * so that the convention matrices cover every route, including routes added after they
 * were written: path filling, minimal bodies from body schemas, the fields a schema marks
 * as amounts or enums, keys per scope, a raw HTTPS caller, and a snapshot of the whole
 * database to prove that a refused request changed nothing.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { RouteEntry } from '../../src/gateway/plugins/route-table.js';
import { AgentpayClient, type RawResponse } from '../../packages/sdk/src/client/index.js';
import { issueKey } from '../../src/domain/tenancy/api-keys.js';
import { DEFAULT_SCOPES, type Scope } from '../../src/domain/tenancy/scopes.js';
import { OPERATOR_TENANT_ID } from '../../src/domain/tenancy/tenants.js';
import { pgGatewayOfDataDir, sqliteOf, type TestGateway } from './gateway.js';
import type { SyncPg } from './db-sync.js';

export type { RouteEntry };
export type JsonSchema = Record<string, unknown>;
export type TenantKind = 'workspace' | 'provider' | 'operator';

/** Every route a client can call: the HEAD and OPTIONS routes fastify adds are left out. */
export function apiRoutes(t: TestGateway): RouteEntry[] {
  return t.gw.app.routeTable.filter((r) => r.method !== 'HEAD' && r.method !== 'OPTIONS');
}

export const routeName = (r: Pick<RouteEntry, 'method' | 'url'>) => `${r.method} ${r.url}`;

/** Routes that need a key: a scope, or `authenticated` (any valid key). */
export const needsKey = (r: RouteEntry) => !r.config.public && Boolean(r.config.scope || r.config.authenticated);

export const hasBody = (method: string) => method === 'POST' || method === 'PUT' || method === 'PATCH' || method === 'DELETE';

/** `:name` placeholders of a fastify URL, in order. */
export function pathParams(url: string): string[] {
  return [...url.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!);
}

/** The URL with every param replaced: one value for all, or a value per name (missing names throw). */
export function fillPath(url: string, values: string | Readonly<Record<string, string>>): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, (_m, name: string) => {
    const v = typeof values === 'string' ? values : values[name];
    if (v === undefined) throw new Error(`no value for path param :${name} of ${url}`);
    return encodeURIComponent(v);
  });
}

export function bodySchema(r: RouteEntry): JsonSchema | undefined {
  return (r.schema?.body as JsonSchema | undefined) ?? undefined;
}

export function querySchema(r: RouteEntry): JsonSchema | undefined {
  return (r.schema?.querystring as JsonSchema | undefined) ?? undefined;
}

const branches = (s: JsonSchema) => ((s.anyOf ?? s.oneOf) as JsonSchema[] | undefined) ?? undefined;
const isNull = (s: JsonSchema) => s.type === 'null';

/** A body may be left out entirely: no body schema, or one that admits null (OptionalBody). */
export function bodyIsOptional(r: RouteEntry): boolean {
  const s = bodySchema(r);
  if (!s) return true;
  return Boolean(branches(s)?.some(isNull));
}

/**
 * The smallest value a schema accepts, as far as a generic walk can tell: required
 * properties only, first enum value, "1" for amounts, the schema's own `examples[0]` or
 * `default` when it has one (add `examples` to a schema whose pattern this cannot guess).
 */
export function minimalValue(s: JsonSchema): unknown {
  if (Array.isArray(s.examples) && s.examples.length > 0) return s.examples[0];
  if (s.default !== undefined) return s.default;
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.enum)) return s.enum[0];
  const alts = branches(s);
  if (alts) return minimalValue(alts.find((b) => !isNull(b)) ?? alts[0]!);
  if (Array.isArray(s.allOf)) return Object.assign({}, ...(s.allOf as JsonSchema[]).map(minimalValue));
  switch (s.type) {
    case 'string':
      if (s['x-amount']) return '1';
      if (s.format === 'email') return 'someone@example.com';
      if (s.format === 'uri' || s.format === 'url') return 'https://example.com';
      return 'x'.repeat(Math.max(1, Number(s.minLength ?? 1)));
    case 'integer':
    case 'number':
      return s.minimum !== undefined ? Number(s.minimum) : s.exclusiveMinimum !== undefined ? Number(s.exclusiveMinimum) + 1 : 1;
    case 'boolean':
      return false;
    case 'null':
      return null;
    case 'array': {
      const n = Number(s.minItems ?? 0);
      return Array.from({ length: n }, () => minimalValue((s.items as JsonSchema | undefined) ?? {}));
    }
    case 'object':
    default: {
      const props = (s.properties ?? {}) as Record<string, JsonSchema>;
      const required = (s.required ?? []) as string[];
      return Object.fromEntries(required.map((k) => [k, minimalValue(props[k] ?? {})]));
    }
  }
}

/** A minimal valid body for the route, or undefined if it takes none. */
export function minimalBody(r: RouteEntry): Record<string, unknown> | undefined {
  const s = bodySchema(r);
  return s ? (minimalValue(s) as Record<string, unknown>) : undefined;
}

/**
 * The minimal body with named values filled in: a fixture's values (e.g. `providerId`)
 * go into the same-named top-level body properties, so the body refers to real records.
 * Routes that take a body but declare no schema get `{}`.
 */
export function bodyFor(r: RouteEntry, values: Readonly<Record<string, string>> = {}): Record<string, unknown> {
  let body = minimalBody(r) ?? {};
  const props = new Set<string>();
  walkProperties(bodySchema(r), (path) => props.add(path));
  for (const [k, v] of Object.entries(values)) if (props.has(k)) body = withPath(body, k, v);
  return body;
}

/** Walks object properties (through anyOf/oneOf/allOf), calling `visit` with dotted paths. */
function walkProperties(s: JsonSchema | undefined, visit: (path: string, prop: JsonSchema) => void, prefix = ''): void {
  if (!s) return;
  for (const b of [...(branches(s) ?? []), ...((s.allOf as JsonSchema[] | undefined) ?? [])]) walkProperties(b, visit, prefix);
  for (const [k, prop] of Object.entries((s.properties ?? {}) as Record<string, JsonSchema>)) {
    const path = prefix ? `${prefix}.${k}` : k;
    visit(path, prop);
    walkProperties(prop, visit, path);
  }
}

/** Dotted paths of the properties marked `x-amount` (src/gateway/schemas.ts Amount()). */
export function amountFields(s: JsonSchema | undefined): string[] {
  const out = new Set<string>();
  walkProperties(s, (path, prop) => {
    if (prop['x-amount'] || branches(prop)?.some((b) => b['x-amount'])) out.add(path);
  });
  return [...out];
}

/** Dotted paths and allowed values of the string-enum properties. */
export function enumFields(s: JsonSchema | undefined): { path: string; values: unknown[] }[] {
  const out = new Map<string, unknown[]>();
  walkProperties(s, (path, prop) => {
    if (Array.isArray(prop.enum)) out.set(path, prop.enum);
  });
  return [...out].map(([path, values]) => ({ path, values }));
}

/** A copy of `obj` with the dotted path set, creating objects on the way. */
export function withPath(obj: Record<string, unknown> | undefined, path: string, value: unknown): Record<string, unknown> {
  const copy = structuredClone(obj ?? {}) as Record<string, unknown>;
  const keys = path.split('.');
  let cur = copy;
  for (const k of keys.slice(0, -1)) {
    if (typeof cur[k] !== 'object' || cur[k] === null) cur[k] = {};
    cur = cur[k] as Record<string, unknown>;
  }
  cur[keys.at(-1)!] = value;
  return copy;
}

/** The tenant kind whose default scopes include `scope`: workspace first, then provider, then the operator. */
export function tenantKindFor(scope: Scope): TenantKind {
  if (DEFAULT_SCOPES.workspace.includes(scope)) return 'workspace';
  if (DEFAULT_SCOPES.provider.includes(scope)) return 'provider';
  return 'operator';
}

/** The dev bootstrap's tenant of a kind (the operator is the platform tenant). */
export function devTenant(t: TestGateway, kind: TenantKind): { id: string; kind: TenantKind } {
  if (kind === 'workspace') return { id: t.creds.workspace.id, kind };
  if (kind === 'provider') return { id: t.creds.provider.id, kind };
  return { id: OPERATOR_TENANT_ID, kind };
}

/** The dev bootstrap's full-scope key of a kind. */
export function devKey(t: TestGateway, kind: TenantKind): string {
  return kind === 'workspace' ? t.creds.workspace.apiKey : kind === 'provider' ? t.creds.provider.apiKey : t.creds.operatorKey;
}

/** Mints a key for a tenant with exactly these scopes. */
export async function mintKey(t: TestGateway, tenant: { id: string; kind: TenantKind }, scopes: readonly Scope[]): Promise<string> {
  const ctx = t.gw.services.ctx;
  return t.gw.store.tx(async (r) => (await issueKey(r, ctx, tenant, { name: 'matrix', scopes })).key);
}

export interface CallOptions {
  /** an API key, or null for none */
  apiKey?: string | null;
  /** a JSON body (sets content-type) */
  body?: unknown;
  headers?: Record<string, string>;
  baseUrl?: string;
}

/** One raw request over the test gateway's HTTPS (or `baseUrl`), never throwing on a status. */
export function call(t: TestGateway, method: string, path: string, opts: CallOptions = {}): Promise<RawResponse<{ error?: { code: string; message: string; details: Record<string, unknown> } } & Record<string, unknown>>> {
  const client = opts.baseUrl ? new AgentpayClient({ gatewayUrl: opts.baseUrl, ca: t.ca }) : t.client();
  return client.http.raw(method, path, {
    apiKey: opts.apiKey ?? null,
    ...(opts.body !== undefined ? { body: opts.body } : {}),
    ...(opts.headers ? { headers: opts.headers } : {}),
  });
}

export type DbSnapshot = Record<string, unknown[]>;

/**
 * Columns that may change on any authenticated request without changing a record:
 * bookkeeping of when a key was last used.
 */
const VOLATILE_COLUMNS: Record<string, readonly string[]> = { api_keys: ['last_used_at'] };

/**
 * Every row of every table of the gateway's database, read through a separate
 * read-only connection, ordered by rowid (by every column for WITHOUT ROWID tables).
 */
export function snapshotDb(dataDir: string): DbSnapshot {
  const pg = pgGatewayOfDataDir.get(dataDir);
  if (pg) return snapshotPg(pg);
  const db = new Database(join(dataDir, 'agentpay.db'), { readonly: true, fileMustExist: true });
  try {
    db.defaultSafeIntegers(true);
    const tables = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string; sql: string | null }[];
    const snap: DbSnapshot = {};
    for (const { name, sql } of tables) {
      const q = (s: string) => `"${s.replace(/"/g, '""')}"`;
      const cols = (db.prepare(`SELECT name FROM pragma_table_info(?)`).pluck().all(name) as string[]);
      const order = /WITHOUT\s+ROWID/i.test(sql ?? '') ? cols.map((c) => q(c)).join(', ') : 'rowid';
      const rows = db.prepare(`SELECT * FROM ${q(name)} ORDER BY ${order}`).all() as Record<string, unknown>[];
      const volatile = VOLATILE_COLUMNS[name] ?? [];
      snap[name] = volatile.length ? rows.map((row) => Object.fromEntries(Object.entries(row).filter(([c]) => !volatile.includes(c)))) : rows;
    }
    return snap;
  } finally {
    db.close();
  }
}

/**
 * snapshotDb on PostgreSQL: every table of the public schema, each row as its jsonb text (bigints
 * exact), rows in that text's order. One query for all tables, on the gateway's synchronous
 * connection (sqliteOf): a query per table on a new connection each time took 0.15-0.3 s a
 * snapshot, most of the tenancy matrix's time on PostgreSQL.
 */
function snapshotPg(gw: TestGateway['gw']): DbSnapshot {
  const db = sqliteOf(gw) as unknown as SyncPg;
  let sql = snapshotSql.get(gw.store);
  if (!sql) {
    const q = (x: string) => `"${x.replace(/"/g, '""')}"`;
    const lit = (x: string) => `'${x.replace(/'/g, "''")}'`;
    const tables = (db.query("SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename").rows as { name: string }[]).map((r) => r.name);
    sql = tables.map((name) => {
      const row = ['to_jsonb(x)', ...(VOLATILE_COLUMNS[name] ?? []).map(lit)].join(' - ');
      return `SELECT ${lit(name)} AS name, (SELECT coalesce(json_agg(r ORDER BY r), '[]'::json) FROM (SELECT (${row})::text AS r FROM ${q(name)} x) s)::text AS rows`;
    }).join(' UNION ALL ');
    snapshotSql.set(gw.store, sql);
  }
  const snap: DbSnapshot = {};
  for (const { name, rows } of db.query(sql).rows as { name: string; rows: string }[]) snap[name] = JSON.parse(rows) as string[];
  return snap;
}
const snapshotSql = new WeakMap<object, string>();

/** Names of the tables whose rows differ between two snapshots (for a readable failure). */
export function changedTables(before: DbSnapshot, after: DbSnapshot): string[] {
  const names = new Set([...Object.keys(before), ...Object.keys(after)]);
  const str = (v: unknown) => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x));
  return [...names].filter((n) => str(before[n]) !== str(after[n])).sort();
}
