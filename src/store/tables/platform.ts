import { sql } from 'drizzle-orm';
import { int, table, text, uniqueIndex } from './kit.js';

/**
 * Platform signing keys (challenges and receipts), with their private halves
 * (src/domain/payments/key-sealing.ts): `private_key` is the private key sealed with the
 * operator's key-encryption key (`v1.<kek id>.…`), or its PEM in clear (a sandbox without
 * one), or null when it is only in DATA_DIR/keys/<id>.pem (no key-encryption key, or a key
 * made before drizzle/0016 and drizzle-pg/0010 that no instance has imported yet).
 * At most one key is current: the partial unique index is the guard behind the creation lock.
 */
export const signingKeys = table('signing_keys', {
  id: text('id').primaryKey(),
  publicKeyPem: text('public_key_pem').notNull(),
  status: text('status', { enum: ['current', 'retired'] }).notNull(),
  createdAt: int('created_at').notNull(),
  retiredAt: int('retired_at'),
  privateKey: text('private_key'),
}, (t) => [uniqueIndex('signing_keys_one_current').on(t.status).where(sql`status = 'current'`)]);
