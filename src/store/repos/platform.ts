import type { signingKeys } from '../schema/index.js';

export type SigningKeyRecord = typeof signingKeys.$inferSelect;

export interface SigningKeyRepo {
  insert(k: SigningKeyRecord): Promise<void>;
  get(id: string): Promise<SigningKeyRecord | undefined>;
  current(): Promise<SigningKeyRecord | undefined>;
  all(): Promise<SigningKeyRecord[]>;
  retire(id: string, at: number): Promise<void>;
}
