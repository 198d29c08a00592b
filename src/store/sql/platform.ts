import type { SigningKeyRecord } from '../repos/platform.js';
import type { Sql } from './sql.js';

/** the public columns: a read never carries a private half it was not asked for */
const PUBLIC = 'SELECT id, public_key_pem, status, created_at, retired_at FROM signing_keys';
/** the lock under which a current signing key is made or replaced (lockCurrent) */
const CURRENT_KEY_LOCK = 'agentpay:signing-keys:current';

const record = (r: unknown[]): SigningKeyRecord => ({
  id: r[0] as string,
  publicKeyPem: r[1] as string,
  status: r[2] as SigningKeyRecord['status'],
  createdAt: Number(r[3]),
  retiredAt: r[4] === null ? null : Number(r[4]),
});

export class SigningKeys {
  private readonly t;
  constructor(private readonly c: Sql) { this.t = c.table('signingKeys'); }
  insert(k: SigningKeyRecord & { privateKey?: string | null }) { return this.t.insert({ ...k, privateKey: k.privateKey ?? null }); }
  async get(id: string) {
    const r = await this.c.one(`${PUBLIC} WHERE id = ?`, [id]);
    return r && record(r);
  }
  async current() {
    const r = await this.c.one(`${PUBLIC} WHERE status = 'current' ORDER BY created_at DESC LIMIT 1`);
    return r && record(r);
  }
  async all() { return (await this.c.rows(`${PUBLIC} ORDER BY created_at, id`)).map(record); }
  async retire(id: string, at: number) { await this.t.update({ id }, { status: 'retired', retiredAt: at }); }
  /** the stored private half of a key: sealed or a PEM; null when it is not in the database; undefined: no such key */
  async privateKey(id: string) { return (await this.t.first({ id }))?.privateKey; }
  /**
   * Stores a key's private half in place of `expected` (a re-seal, an import from DATA_DIR/keys):
   * whether it did; false when another instance changed it first.
   */
  async replacePrivateKey(id: string, value: string, expected: string | null) {
    return (await this.t.update({ id, privateKey: expected }, { privateKey: value })) === 1;
  }
  /**
   * Takes the lock under which a current key is made or replaced, until the transaction ends, so
   * instances that start or rotate at once make one key after another. Dialect switch, locks:
   * PostgreSQL takes an advisory transaction lock; SQLite's write transactions are one at a time
   * already.
   */
  async lockCurrent() {
    if (this.c.dialect === 'pg') await this.c.rows('SELECT pg_advisory_xact_lock(hashtext(?::text))', [CURRENT_KEY_LOCK]);
  }
}
