/**
 * What both client plug-ins (x402.ts, mppx.ts) share: our Payer (platform key checks, price
 * ceiling, expiry, proof signing, receipt checks, exactly as createBuyer does) and a fetch
 * wrapper that checks the signed receipt of every paid answer against the exact bytes
 * received. No Node imports; no import of @x402/* or mppx.
 */
import { createPayer, type Payer, type PayerOptions } from '../buyer/payer.js';
import { AgentpayError } from '../errors.js';
import { decodeHeader, isPriceChallenge, RECEIPT_HEADER, type PaymentProof, type PriceChallenge, type Receipt } from '../protocol.js';
import {
  asX402PaymentPayload, AUTHORIZATION_HEADER, decodePaymentCredential, decodePaymentReceipt, decodeX402Header, PAYMENT_RECEIPT_HEADER,
  X402_PAYMENT_RESPONSE_HEADER, X402_PAYMENT_SIGNATURE_HEADER, proofOf, type X402SettlementResponse,
} from './wire.js';

export type AgentpayPluginOptions = PayerOptions & {
  /** an existing payer to share (its platform key cache); the other options are then ignored but walletId */
  payer?: Payer;
};

export function payerOf(opts: AgentpayPluginOptions): Payer {
  return opts.payer ?? createPayer(opts);
}

/** The challenge of a price offered in another dialect, checked against the platform key. Throws INVALID_CHALLENGE. */
export async function verifiedOfferedChallenge(payer: Payer, challenge: unknown): Promise<PriceChallenge> {
  if (!isPriceChallenge(challenge)) {
    throw new AgentpayError('INVALID_CHALLENGE', 'the seller asked for an agentpay payment without a well-formed signed price challenge; nothing was signed', { status: 402, body: { challenge } });
  }
  const c = await payer.verifiedChallenge({ error: { code: 'PAYMENT_REQUIRED' }, challenge });
  return c!;
}

export function mismatch(what: string, details: Record<string, unknown>): AgentpayError {
  return new AgentpayError('CHALLENGE_MISMATCH', `the ${what} does not match the platform-signed challenge it carries; nothing was signed. Do not buy from this seller`, { details });
}

function headersOf(input: unknown, init: RequestInit | undefined): Headers {
  if (init?.headers) return new Headers(init.headers);
  if (typeof Request !== 'undefined' && input instanceof Request) return input.headers;
  const h = (input as { headers?: HeadersInit } | null)?.headers;
  return new Headers(h ?? undefined);
}

/** The proof a request carried, in whichever dialect; undefined for an unpaid request. */
export function proofOfRequest(headers: Headers): PaymentProof | undefined {
  const sig = headers.get(X402_PAYMENT_SIGNATURE_HEADER);
  if (sig) {
    try {
      const p = asX402PaymentPayload(decodeX402Header(sig));
      return p ? proofOf(p.payload) : undefined;
    } catch {
      return undefined;
    }
  }
  const auth = headers.get(AUTHORIZATION_HEADER);
  if (auth) {
    try {
      const c = decodePaymentCredential(auth);
      return c ? proofOf(c.payload) : undefined;
    } catch {
      return undefined;
    }
  }
  const ours = headers.get('x-payment');
  if (ours) {
    try {
      return decodeHeader<PaymentProof>(ours);
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** The platform-signed receipt an answer carries: x-service-receipt, else PAYMENT-RESPONSE extra, else Payment-Receipt. */
export function receiptOfResponse(headers: Headers): unknown {
  const bad = (h: string) => new AgentpayError('INVALID_RECEIPT', `the seller's ${h} header is not decodable`, {});
  const ours = headers.get(RECEIPT_HEADER);
  if (ours) {
    try {
      return decodeHeader(ours);
    } catch {
      throw bad(RECEIPT_HEADER);
    }
  }
  const x = headers.get(X402_PAYMENT_RESPONSE_HEADER);
  if (x) {
    try {
      return decodeX402Header<X402SettlementResponse>(x).extra?.receipt;
    } catch {
      throw bad('PAYMENT-RESPONSE');
    }
  }
  const p = headers.get(PAYMENT_RECEIPT_HEADER);
  if (p) {
    try {
      return decodePaymentReceipt(p).receipt;
    } catch {
      throw bad('Payment-Receipt');
    }
  }
  return undefined;
}

export interface ReceiptCheckOptions {
  /** told each receipt verified (the answer's, checked against the bytes received) */
  onReceipt?: (receipt: Receipt, response: Response) => void;
}

/**
 * A fetch for the stock clients to send through (`wrapFetchWithPayment(fetch, …)`,
 * `Mppx.create({ fetch })`): on every answer to a paid request (one that carried a proof in
 * any dialect) it checks the signed receipt against the platform key, the challenge paid and
 * the exact bytes received, and throws INVALID_RECEIPT otherwise, which rejects the stock
 * client's call. The body stays readable (a clone is hashed).
 */
export function receiptCheckingFetch(payer: Payer, inner: typeof fetch = globalThis.fetch, o: ReceiptCheckOptions = {}): typeof fetch {
  return (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    const proof = proofOfRequest(headersOf(input, init));
    const res = await inner(input, init);
    if (!proof || res.status === 402 || !isPriceChallenge(proof.challenge)) return res;
    const receipt = receiptOfResponse(res.headers);
    if (receipt === undefined) return res; // the seller could not reach its gateway to settle: nothing to check (as createBuyer)
    const bytes = new Uint8Array(await res.clone().arrayBuffer());
    const verified = await payer.verifiedReceipt(receipt, bytes, proof.challenge);
    if (verified) o.onReceipt?.(verified, res);
    return res;
  }) as typeof fetch;
}

/** `pay_` + 32 hex: a fresh x402 payment-identifier. */
export function newPaymentId(): string {
  const b = new Uint8Array(16);
  globalThis.crypto.getRandomValues(b);
  return `pay_${Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('')}`;
}
