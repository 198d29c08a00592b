import type { signingKeys } from '../schema/index.js';

/** A signing key as stored, with its private half (sealed, or a PEM; null: only in DATA_DIR/keys). */
export type SigningKeyRow = typeof signingKeys.$inferSelect;
/** A signing key's public record: what is served and compared; never its private half. */
export type SigningKeyRecord = Omit<SigningKeyRow, 'privateKey'>;
