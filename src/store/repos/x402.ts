import type { x402Authorizations } from '../schema/index.js';

export type X402Authorization = typeof x402Authorizations.$inferSelect;
export type X402AuthorizationState = X402Authorization['state'];
export type X402AuthorizationPatch = Partial<Pick<X402Authorization, 'state' | 'txHash' | 'responseHash' | 'transactionId' | 'attempts' | 'lastError' | 'updatedAt' | 'settledAt' | 'reconciledAt'>>;
