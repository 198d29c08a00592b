import type { x402Authorizations } from '../schema/index.js';

export type X402Authorization = typeof x402Authorizations.$inferSelect;
export type X402AuthorizationState = X402Authorization['state'];
export type X402AuthorizationPatch = Partial<Pick<X402Authorization, 'state' | 'txHash' | 'transactionId' | 'attempts' | 'lastError' | 'updatedAt' | 'settledAt'>>;

export interface X402AuthorizationRepo {
  /** throws a unique violation when the network and token already have this nonce */
  insert(a: X402Authorization): Promise<void>;
  get(id: string): Promise<X402Authorization | undefined>;
  byNonce(network: string, asset: string, nonce: string): Promise<X402Authorization | undefined>;
  /** changes the row only if it is in one of `from`; false when it is not (another got there first) */
  transition(id: string, from: X402AuthorizationState[], patch: X402AuthorizationPatch): Promise<boolean>;
  update(id: string, patch: X402AuthorizationPatch): Promise<void>;
  listByState(states: X402AuthorizationState[], limit: number): Promise<X402Authorization[]>;
}
