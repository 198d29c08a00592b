import { asc, eq } from 'drizzle-orm';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { signingKeys } from '../schema/index.js';
import type { SigningKeyRepo, SigningKeyRecord } from '../repos/platform.js';

export class SqliteSigningKeys implements SigningKeyRepo {
  constructor(private db: BetterSQLite3Database) {}
  async insert(k: SigningKeyRecord) { this.db.insert(signingKeys).values(k).run(); }
  async get(id: string) { return this.db.select().from(signingKeys).where(eq(signingKeys.id, id)).get(); }
  async current() { return this.db.select().from(signingKeys).where(eq(signingKeys.status, 'current')).get(); }
  async all() { return this.db.select().from(signingKeys).orderBy(asc(signingKeys.createdAt)).all(); }
  async retire(id: string, at: number) { this.db.update(signingKeys).set({ status: 'retired', retiredAt: at }).where(eq(signingKeys.id, id)).run(); }
}
