import { and, asc, eq, isNull } from 'drizzle-orm';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { signingKeys } from '../schema/index.js';
import type { SigningKeyRepo, SigningKeyRecord } from '../repos/platform.js';

/** the public columns: a read never carries a private half it was not asked for */
const PUBLIC = {
  id: signingKeys.id,
  publicKeyPem: signingKeys.publicKeyPem,
  status: signingKeys.status,
  createdAt: signingKeys.createdAt,
  retiredAt: signingKeys.retiredAt,
};

export class SqliteSigningKeys implements SigningKeyRepo {
  constructor(private db: BetterSQLite3Database) {}
  async insert(k: SigningKeyRecord & { privateKey?: string | null }) { this.db.insert(signingKeys).values({ ...k, privateKey: k.privateKey ?? null }).run(); }
  async get(id: string) { return this.db.select(PUBLIC).from(signingKeys).where(eq(signingKeys.id, id)).get(); }
  async current() { return this.db.select(PUBLIC).from(signingKeys).where(eq(signingKeys.status, 'current')).get(); }
  async all() { return this.db.select(PUBLIC).from(signingKeys).orderBy(asc(signingKeys.createdAt), asc(signingKeys.id)).all(); }
  async retire(id: string, at: number) { this.db.update(signingKeys).set({ status: 'retired', retiredAt: at }).where(eq(signingKeys.id, id)).run(); }
  async privateKey(id: string) {
    return this.db.select({ privateKey: signingKeys.privateKey }).from(signingKeys).where(eq(signingKeys.id, id)).get()?.privateKey;
  }
  async replacePrivateKey(id: string, value: string, expected: string | null) {
    const same = expected === null ? isNull(signingKeys.privateKey) : eq(signingKeys.privateKey, expected);
    return this.db.update(signingKeys).set({ privateKey: value }).where(and(eq(signingKeys.id, id), same)).run().changes === 1;
  }
  async lockCurrent() {}
}
