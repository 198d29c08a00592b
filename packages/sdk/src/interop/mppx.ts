/**
 * `agentpay-sdk/mppx`: the `agentpay` payment method (intent `charge`) for mppx, the client of
 * the HTTP `Payment` authentication scheme (MPP). With it mppx's paying fetch, and its MCP
 * client, pay an agentpay seller:
 *
 *   import { Mppx } from 'mppx/client';
 *   import { agentpayMppx } from 'agentpay-sdk/mppx';
 *   const agentpay = agentpayMppx({ gatewayUrl, walletId, privateKeyPem, maxPriceMinor: '500' });
 *   const mppx = Mppx.create({ methods: [agentpay.method], fetch: agentpay.fetch(), polyfill: false });
 *   const res = await mppx.fetch('https://seller.example/forecast');
 *
 * `createCredential` does what createBuyer does before signing: the challenge in the request's
 * `methodDetails` must be signed by the platform key, unexpired, at or under `maxPriceMinor`,
 * and the Payment challenge's id, amount and currency must agree with it. mppx verifies no
 * receipts and swallows errors in its event handlers, so the receipt is checked in the inner
 * fetch (`agentpay.fetch()`): signature, wallet, capability, amount and the exact bytes.
 * Pass `polyfill: false`: by default Mppx.create replaces globalThis.fetch.
 *
 * The method is a plain object of the shape mppx's Method.toClient returns (name, intent,
 * schema, createCredential): this module imports nothing from mppx.
 */
import { AgentpayError } from '../errors.js';
import type { Payer } from '../buyer/payer.js';
import type { Receipt } from '../protocol.js';
import { mismatch, payerOf, receiptCheckingFetch, verifiedOfferedChallenge, type AgentpayPluginOptions, type ReceiptCheckOptions } from './client-common.js';
import { AGENTPAY_INTENT, AGENTPAY_SCHEME, agentpayChallengeFromPaymentRequest, encodePaymentCredential, type PaymentChallengeParams, type PaymentCredential } from './wire.js';

export * from './wire.js';
export { receiptCheckingFetch, type AgentpayPluginOptions } from './client-common.js';

/** A challenge as mppx hands it to createCredential (`request` already decoded): the Payment challenge, and what mppx adds. */
export type MppxChallenge = PaymentChallengeParams & {
  digest?: string;
  opaque?: string;
  [k: string]: unknown;
};

/** zod-like parser: mppx's server side calls `.parse`; its client never does. */
interface Parser<T> {
  parse(value: unknown): T;
  safeParse(value: unknown): { success: true; data: T } | { success: false; error: Error };
}

function parser<T>(check: (v: unknown) => string | null): Parser<T> {
  return {
    parse(v) {
      const why = check(v);
      if (why) throw new AgentpayError('VALIDATION_FAILED', why, {});
      return v as T;
    },
    safeParse(v) {
      const why = check(v);
      return why ? { success: false, error: new Error(why) } : { success: true, data: v as T };
    },
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** The method definition (mppx Method.from shape). */
export const agentpayCharge = {
  name: AGENTPAY_SCHEME,
  intent: AGENTPAY_INTENT,
  schema: {
    credential: {
      payload: parser<{ proof: Record<string, unknown> }>((v) => (isObject(v) && isObject(v.proof) ? null : 'payload.proof: the signed agentpay proof object is required')),
    },
    request: parser<Record<string, unknown>>((v) => {
      if (!isObject(v)) return 'request: must be an object';
      if (typeof v.amount !== 'string' || typeof v.currency !== 'string') return 'request.amount and request.currency: strings are required';
      if (!isObject(v.methodDetails) || !isObject(v.methodDetails.challenge)) return 'request.methodDetails.challenge: the platform-signed agentpay challenge is required';
      return null;
    }),
  },
} as const;

export interface AgentpayMppxMethod {
  readonly name: 'agentpay';
  readonly intent: 'charge';
  readonly schema: typeof agentpayCharge.schema;
  /** returns the `Authorization` value: `Payment <base64url credential>` */
  createCredential(args: { challenge: MppxChallenge; context?: unknown }): Promise<string>;
}

export interface AgentpayMppx {
  /** give to `Mppx.create({ methods: [method] })` or `McpClient.wrap(client, { methods: [method] })` */
  readonly method: AgentpayMppxMethod;
  readonly payer: Payer;
  /** an inner fetch for `Mppx.create({ fetch })` that checks every paid answer's signed receipt */
  fetch(inner?: typeof fetch, o?: ReceiptCheckOptions): typeof fetch;
  /** the last receipt the checking fetch verified */
  readonly lastReceipt: Receipt | undefined;
}

/** The method alone (its checks before signing included), for mppx's fetch or MCP client. */
export function agentpayMppxMethod(opts: AgentpayPluginOptions): AgentpayMppxMethod {
  return createMethod(payerOf(opts));
}

function createMethod(payer: Payer): AgentpayMppxMethod {
  return {
    ...agentpayCharge,
    async createCredential({ challenge }) {
      // mppx does not run schema.request client-side: the checks are here
      const request = agentpayCharge.schema.request.parse(challenge.request);
      const signed = await verifiedOfferedChallenge(payer, agentpayChallengeFromPaymentRequest(request));
      if (challenge.method !== AGENTPAY_SCHEME || challenge.id !== signed.nonce || request.amount !== signed.amountMinor || String(request.currency).toLowerCase() !== signed.currency.toLowerCase()) {
        throw mismatch('Payment challenge (id, amount or currency)', { id: challenge.id, amount: request.amount, currency: request.currency, nonce: signed.nonce, amountMinor: signed.amountMinor });
      }
      const proof = await payer.signProof(signed); // ceiling and expiry: refused before signing
      const credential: PaymentCredential = {
        challenge: challenge as PaymentCredential['challenge'],
        payload: { proof },
        source: payer.walletId,
      };
      return encodePaymentCredential(credential);
    },
  };
}

/** The method plus a receipt-checking inner fetch sharing one payer (one platform key cache). */
export function agentpayMppx(opts: AgentpayPluginOptions): AgentpayMppx {
  const payer = payerOf(opts);
  let lastReceipt: Receipt | undefined;
  return {
    method: createMethod(payer),
    payer,
    get lastReceipt() {
      return lastReceipt;
    },
    fetch(inner = globalThis.fetch, o = {}) {
      return receiptCheckingFetch(payer, inner, {
        ...o,
        onReceipt: (r, res) => {
          lastReceipt = r;
          o.onReceipt?.(r, res);
        },
      });
    },
  };
}
