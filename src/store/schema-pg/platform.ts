import { pgTable, text } from 'drizzle-orm/pg-core';
import { int } from './columns.js';

/**
 * Platform signing keys (challenges and receipts). Only the public half is here;
 * the private half is a 0600 file in the data directory named after the key id.
 */
export const signingKeys = pgTable('signing_keys', {
  id: text('id').primaryKey(),
  publicKeyPem: text('public_key_pem').notNull(),
  status: text('status', { enum: ['current', 'retired'] }).notNull(),
  createdAt: int('created_at').notNull(),
  retiredAt: int('retired_at'),
});
