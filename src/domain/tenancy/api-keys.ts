/**
 * API keys. A key is `ap_<kind letter>_<32 random base62 chars>`; only its SHA-256
 * is stored (the key has ~190 bits of entropy, so a fast hash is the right tool and a
 * lookup costs one index probe). The key is returned once, at creation.
 */
import { createHash, randomBytes } from 'node:crypto';
import { AppError, forbidden } from '../../core/errors.js';
import type { Repos } from '../../store/store.js';
import type { ApiKey, Tenant } from '../../store/repos/tenancy.js';
import type { DomainContext } from '../platform/context.js';
import { DEFAULT_SCOPES, isScope, type Scope } from './scopes.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KIND_LETTER = { workspace: 'w', provider: 'p', operator: 'o' } as const;

/** The kind of tenant a key belongs to, read from its prefix (`ap_w_…`); undefined for anything else. */
export function keyKindOf(key: string): keyof typeof KIND_LETTER | undefined {
  return (Object.keys(KIND_LETTER) as Array<keyof typeof KIND_LETTER>).find((k) => key.startsWith(`ap_${KIND_LETTER[k]}_`));
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

function randomBase62(n: number): string {
  const bytes = randomBytes(n * 2);
  let s = '';
  for (let i = 0; s.length < n && i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b < 248) s += BASE62[b % 62]; // 248 = 4*62: no modulo bias
  }
  return s.length === n ? s : s + randomBase62(n - s.length);
}

export interface Principal {
  keyId: string;
  tenantId: string;
  tenantKind: Tenant['kind'];
  scopes: ReadonlySet<string>;
}

export interface IssuedKey {
  record: ApiKey;
  key: string;
}

export async function issueKey(
  r: Repos,
  ctx: Pick<DomainContext, 'clock' | 'ids'>,
  tenant: Pick<Tenant, 'id' | 'kind'>,
  opts: {
    name?: string;
    scopes?: readonly string[];
    expiresAt?: number | null;
    /** the key minting this one (POST /v1/auth/keys): revoked with it */
    parentKeyId?: string;
    /** the account whose login issues this key: revoked by a password reset of it */
    loginAccountId?: string;
  } = {},
): Promise<IssuedKey> {
  const allowed = DEFAULT_SCOPES[tenant.kind];
  const scopes = opts.scopes ?? allowed;
  for (const s of scopes) {
    if (!isScope(s)) throw new AppError('VALIDATION_FAILED', `scopes: unknown scope ${JSON.stringify(s)}`, { field: 'scopes', scope: s });
    if (!allowed.includes(s)) throw forbidden(`a ${tenant.kind} key cannot hold the scope ${s}`, { scope: s, reason: 'scope_not_grantable' });
  }
  const key = `ap_${KIND_LETTER[tenant.kind]}_${randomBase62(32)}`;
  const now = ctx.clock.now();
  const record: ApiKey = {
    id: ctx.ids.next('apiKey'),
    tenantId: tenant.id,
    name: opts.name ?? 'default',
    keyHash: hashKey(key),
    prefix: key.slice(0, 10),
    scopes: [...new Set(scopes)] as Scope[],
    expiresAt: opts.expiresAt ?? null,
    revokedAt: null,
    lastUsedAt: null,
    createdAt: now,
    parentKeyId: opts.parentKeyId ?? null,
    loginAccountId: opts.loginAccountId ?? null,
  };
  await r.apiKeys.insert(record);
  return { record, key };
}

/**
 * Revokes what `revoke` selects until a round finds nothing more: where transactions run side by
 * side, a key minted by a transaction that committed while the first round ran is seen by the next
 * one (each statement sees what was committed when it began), and a key minted after it finds its
 * parent revoked. Where they run one at a time the second round finds nothing. The ids revoked.
 */
export async function revokeAll(revoke: (at: number) => Promise<string[]>, at: number): Promise<string[]> {
  const all: string[] = [];
  for (let round = 0; round < 100; round++) {
    const ids = await revoke(at);
    if (ids.length === 0) break;
    all.push(...ids);
  }
  return all;
}

/** 401 for a missing, mistyped, expired or revoked key; the message says which. */
export async function authenticate(r: Repos, clock: { now(): number }, key: string | undefined): Promise<Principal> {
  if (!key) throw new AppError('UNAUTHORIZED', 'missing API key: send it in the x-api-key header');
  const record = await r.apiKeys.byHash(hashKey(key));
  if (!record) throw new AppError('UNAUTHORIZED', 'unknown API key');
  if (record.revokedAt !== null) throw new AppError('UNAUTHORIZED', 'API key revoked', { keyId: record.id });
  if (record.expiresAt !== null && record.expiresAt <= clock.now()) {
    throw new AppError('UNAUTHORIZED', 'API key expired', { keyId: record.id });
  }
  const tenant = await r.tenants.get(record.tenantId);
  if (!tenant) throw new AppError('UNAUTHORIZED', 'API key belongs to no tenant');
  return { keyId: record.id, tenantId: tenant.id, tenantKind: tenant.kind, scopes: new Set(record.scopes) };
}

/** A key's `lastUsedAt` is written at most this often (ms): one small write per key in use per minute. */
export const KEY_USE_INTERVAL_MS = 60_000;

/**
 * Records when keys are used without making requests pay for it. `authenticate` runs in a
 * read and stays read-only; the caller passes the key it authenticated to `used`, which
 * costs a map lookup, and at most once per interval per key starts a separate one-row
 * write transaction that the request never waits for. A failed write is reported to
 * `onError` (logged) and never reaches the request; the key is tried again an interval later.
 */
export class KeyUseRecorder {
  /** keyId -> clock time of the last write started for it, oldest first (entries past the interval are dropped) */
  private readonly lastWrite = new Map<string, number>();

  constructor(
    private readonly ctx: Pick<DomainContext, 'store' | 'clock'>,
    private readonly onError: (err: unknown, keyId: string) => void,
    private readonly intervalMs: number = KEY_USE_INTERVAL_MS,
  ) {}

  used(keyId: string): void {
    const now = this.ctx.clock.now();
    const last = this.lastWrite.get(keyId);
    if (last !== undefined && now - last < this.intervalMs) return;
    // re-inserted at the end, so the map stays in time order and what has aged out is at its front:
    // memory for the keys used in the last interval, not for every key ever used
    this.lastWrite.delete(keyId);
    this.lastWrite.set(keyId, now);
    for (const [id, at] of this.lastWrite) {
      if (now - at < this.intervalMs) break;
      this.lastWrite.delete(id);
    }
    // started from a microtask so that even a store throwing synchronously cannot fail the caller
    void Promise.resolve()
      .then(() => this.ctx.store.tx((r) => r.apiKeys.update(keyId, { lastUsedAt: now })))
      .catch((err: unknown) => this.onError(err, keyId));
  }
}

export function requireScope(p: Principal, scope: Scope): void {
  if (!p.scopes.has(scope)) throw forbidden(`this API key lacks the scope ${scope}`, { scope });
}

export function keyView(k: ApiKey) {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    scopes: k.scopes,
    createdAt: new Date(k.createdAt).toISOString(),
    expiresAt: k.expiresAt === null ? null : new Date(k.expiresAt).toISOString(),
    revokedAt: k.revokedAt === null ? null : new Date(k.revokedAt).toISOString(),
    lastUsedAt: k.lastUsedAt === null ? null : new Date(k.lastUsedAt).toISOString(),
    parentKeyId: k.parentKeyId,
  };
}
