/** Wire shapes, from the SDK (src/sdk/types.ts has no imports, so the page can share it). */
export type {
  Approval, Balance, Capability, CapabilityVersion, LedgerEntry, Policy, Provider, Receipt, ReceiptKey, Wallet, Whoami,
} from '../../packages/sdk/src/types.js';
/** GET /v1/platform/activity (types only: nothing of TypeBox reaches the page) */
export type { Activity, ActivityBucketSize } from '../../packages/sdk/src/contract/platform.js';
export type { Session } from '../../packages/sdk/src/contract/sessions.js';

/** A payout as `GET /v1/payouts` lists it (docs/api/rails.md); the fields the page shows. */
export interface Payout {
  id: string;
  walletId: string;
  providerId: string;
  amountMinor: string;
  currency: string;
  rail: string;
  destination: string;
  status: 'submitted' | 'confirmed' | 'returned' | 'failed';
  reason: string | null;
  createdAt: string;
  updatedAt: string;
  settledAt: string | null;
}
