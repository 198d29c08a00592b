/**
 * Payment proofs as they arrive: the object, or the `x-payment` header value
 * (base64url of its UTF-8 JSON). Parsing checks shape only, with the contract's one proof
 * check (agentpay-sdk/contract, checks.ts); signatures are checked by `authorize`. Every
 * refusal names the field, under `payment.`.
 */
import { validationError } from '../../core/errors.js';
import { CURRENCIES, parseMinor } from '../../core/money.js';
import { unsafeText } from '../../core/text.js';
import { isoUtcMs, proofProblem, readHeader, type PaymentProof as ContractPaymentProof } from 'agentpay-sdk/contract';

/** The wire shape, from the contract (agentpay-sdk/contract); a proof may carry more fields, all signed. */
export type PaymentProof = ContractPaymentProof & Record<string, unknown>;

/** A proof with the challenge fields the gateway computes with, already parsed. */
export interface ParsedProof {
  proof: PaymentProof;
  amountMinor: bigint;
  expiresAtMs: number;
}

/** Far more than any real proof (about 1 KB); keeps a hostile header from costing much. */
const MAX_HEADER_LENGTH = 16_384;

function decodeHeader(value: string): unknown {
  const r = readHeader(value, { maxLength: MAX_HEADER_LENGTH });
  if (r.ok) {
    // what the header carries is text of the request as a body is (docs/api/conventions.md § Text)
    const refused = unsafeText(r.value);
    if (refused) throw validationError(`payment${refused.instancePath.split('/').map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~')).join('.')}`, refused.message);
    return r.value;
  }
  if (r.problem === 'too-long' || r.problem === 'not-base64url') {
    throw validationError('payment', 'must be a payment proof object or the x-payment header value (base64url of the proof JSON)');
  }
  if (r.problem === 'not-json') throw validationError('payment', 'is not base64url of a JSON payment proof');
  return undefined; // not an object: refused below, as a proof object that is not one
}

export function parsePaymentProof(payment: unknown): ParsedProof {
  const raw = typeof payment === 'string' ? decodeHeader(payment) : payment;
  const bad = proofProblem(raw, { currencies: CURRENCIES });
  if (bad) {
    // parseMinor words an amount's refusal as every amount of the API is refused
    if (bad.kind === 'amount') parseMinor((raw as { challenge: Record<string, unknown> }).challenge.amountMinor, bad.field);
    throw validationError(bad.field, bad.reason);
  }
  const proof = raw as PaymentProof;
  return { proof, amountMinor: BigInt(proof.challenge.amountMinor), expiresAtMs: isoUtcMs(proof.challenge.expiresAt)! };
}
