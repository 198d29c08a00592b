import type { signingKeys } from '../schema/index.js';

/** A signing key as stored, with its private half (sealed, or a PEM; null: only in DATA_DIR/keys). */
export type SigningKeyRow = typeof signingKeys.$inferSelect;
/** A signing key's public record: what is served and compared; never its private half. */
export type SigningKeyRecord = Omit<SigningKeyRow, 'privateKey'>;

export interface SigningKeyRepo {
  insert(k: SigningKeyRecord & { privateKey?: string | null }): Promise<void>;
  get(id: string): Promise<SigningKeyRecord | undefined>;
  current(): Promise<SigningKeyRecord | undefined>;
  all(): Promise<SigningKeyRecord[]>;
  retire(id: string, at: number): Promise<void>;
  /** the stored private half of a key: sealed or a PEM; null when it is not in the database; undefined: no such key */
  privateKey(id: string): Promise<string | null | undefined>;
  /**
   * Stores a key's private half in place of `expected` (a re-seal, an import from DATA_DIR/keys):
   * whether it did; false when another instance changed it first.
   */
  replacePrivateKey(id: string, value: string, expected: string | null): Promise<boolean>;
  /**
   * Takes the lock under which a current key is made or replaced, until the transaction ends, so
   * instances that start or rotate at once make one key after another (PostgreSQL: an advisory
   * transaction lock; SQLite: its write transactions are one at a time already).
   */
  lockCurrent(): Promise<void>;
}
