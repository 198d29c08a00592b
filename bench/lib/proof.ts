/** A buyer's payment proof (docs/protocol.md "Payment proof"), signed on node:crypto. */
import type { KeyObject } from 'node:crypto';
import { signObject } from '../../src/core/ed25519.js';
import type { PaymentProof, PriceChallenge } from '../../packages/sdk/src/protocol.js';

/** The proof for `challenge`, signed with the agent's key; the caller sends it as the x-payment header (encodeHeader). */
export function signProof(key: KeyObject, walletId: string, challenge: PriceChallenge): PaymentProof {
  const unsigned = { version: 1 as const, challenge, walletId, signedAt: new Date().toISOString() };
  return { ...unsigned, signature: signObject(key, unsigned) };
}
