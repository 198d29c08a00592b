/**
 * `agentpay-sdk/x402`: the `agentpay` payment scheme for x402 v2 clients built on
 * `@x402/core` (`@x402/fetch`, `@x402/axios`). One registration call and a stock client pays
 * an agentpay seller:
 *
 *   import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
 *   import { createAgentpayX402Scheme } from 'agentpay-sdk/x402';
 *   const agentpay = createAgentpayX402Scheme({ gatewayUrl, walletId, privateKeyPem, maxPriceMinor: '500' });
 *   const client = new x402Client().register('agentpay:*', agentpay);
 *   const pay = wrapFetchWithPayment(agentpay.checkingFetch(fetch), client);
 *
 * Before signing, the scheme does what createBuyer does: the challenge in the accept's `extra`
 * must be signed by the platform key, unexpired, at or under `maxPriceMinor`, and the accept's
 * plain fields (unsigned) must agree with it. The signed receipt comes back in
 * `PAYMENT-RESPONSE` (`extra.receipt`): the scheme's response hook checks it (signature,
 * wallet, capability, amount); `checkingFetch` also checks it against the exact bytes received.
 * @x402/axios runs no response hooks: call `verifyAgentpaySettlement` on the answer.
 *
 * Duck-typed against @x402/core's SchemeNetworkClient: this module imports nothing from @x402.
 */
import { AgentpayError } from '../errors.js';
import type { PaymentProof, PriceChallenge, Receipt } from '../protocol.js';
import type { Payer } from '../buyer/payer.js';
import { mismatch, payerOf, receiptCheckingFetch, verifiedOfferedChallenge, type AgentpayPluginOptions, type ReceiptCheckOptions } from './client-common.js';
import { AGENTPAY_SCHEME, decodeX402Header, type X402PaymentPayload, type X402PaymentRequirements, type X402SettlementResponse } from './wire.js';

export * from './wire.js';
export { receiptCheckingFetch, type AgentpayPluginOptions } from './client-common.js';

/** What @x402/core passes to createPaymentPayload as its third argument. */
export interface X402PayloadContext {
  extensions?: Record<string, unknown>;
  /** the x402 client's spend cap in atomic units (minor units here) */
  maxAmountPerPayment?: string;
}

export interface X402PayloadResult {
  x402Version: number;
  payload: Record<string, unknown>;
  extensions?: Record<string, unknown>;
}

export interface X402ResponseHookContext {
  paymentPayload: X402PaymentPayload;
  requirements: X402PaymentRequirements;
  settleResponse?: X402SettlementResponse;
  paymentRequired?: unknown;
  error?: unknown;
}

export type AgentpayX402Options = AgentpayPluginOptions & {
  /**
   * x402 `payment-identifier` (idempotency id) sent when the seller declares the extension:
   * a fixed id (reuse it to retry one logical call) or a function of the PaymentRequired. Default:
   * none. A fresh id per payment would deduplicate nothing (a retried call is a new payment, with a new
   * id) and would only make the gateway keep every answer for 24 hours.
   */
  paymentId?: string | false | ((paymentRequired: { requirements: X402PaymentRequirements }) => string);
  /** decimals of the agentpay asset for x402 spend controls (default 2: minor units are cents) */
  assetDecimals?: number;
};

/** The `agentpay` scheme as an @x402/core SchemeNetworkClient. */
export interface AgentpayX402Scheme {
  readonly scheme: 'agentpay';
  readonly payer: Payer;
  readonly schemeHooks: { onPaymentResponse(ctx: X402ResponseHookContext): Promise<void> };
  /** makes the agentpay asset a "default asset" to x402 spend controls (else a stock x402Client refuses it) */
  findDefaultAsset(asset: string, network: string): { asset: string; decimals: number; symbol: string } | undefined;
  createPaymentPayload(x402Version: number, requirements: X402PaymentRequirements, context?: X402PayloadContext): Promise<X402PayloadResult>;
  /** the last receipt the response hook verified */
  readonly lastReceipt: Receipt | undefined;
  /** a fetch that checks every paid answer's receipt against the exact bytes received (wrap it with wrapFetchWithPayment) */
  checkingFetch(inner?: typeof fetch, o?: ReceiptCheckOptions): typeof fetch;
}

export function createAgentpayX402Scheme(opts: AgentpayX402Options): AgentpayX402Scheme {
  const payer = payerOf(opts);
  const decimals = opts.assetDecimals ?? 2;
  let lastReceipt: Receipt | undefined;

  return {
    scheme: AGENTPAY_SCHEME,
    payer,
    get lastReceipt() {
      return lastReceipt;
    },

    findDefaultAsset(asset, network) {
      if (!network.startsWith(`${AGENTPAY_SCHEME}:`) || !/^[A-Z]{3,5}$/.test(asset)) return undefined;
      return { asset, decimals, symbol: asset };
    },

    async createPaymentPayload(x402Version, requirements, context) {
      const challenge = await verifiedOfferedChallenge(payer, requirements.extra?.challenge);
      if (requirements.amount !== challenge.amountMinor || requirements.asset !== challenge.currency || requirements.payTo !== challenge.payTo) {
        throw mismatch('x402 accept (amount, asset or payTo)', { amount: requirements.amount, asset: requirements.asset, payTo: requirements.payTo, challengeAmountMinor: challenge.amountMinor, challengeCurrency: challenge.currency, challengePayTo: challenge.payTo });
      }
      if (context?.maxAmountPerPayment !== undefined && /^\d+$/.test(context.maxAmountPerPayment) && BigInt(challenge.amountMinor) > BigInt(context.maxAmountPerPayment)) {
        throw new AgentpayError('PRICE_ABOVE_CLIENT_LIMIT', `the price ${challenge.amountMinor} ${challenge.currency} minor units is above the x402 client's spend cap of ${context.maxAmountPerPayment}; nothing was signed`, {
          details: { amountMinor: challenge.amountMinor, maxAmountPerPayment: context.maxAmountPerPayment },
        });
      }
      const proof = await payer.signProof(challenge); // ceiling and expiry: refused before signing
      const declared = context?.extensions?.['payment-identifier'] !== undefined;
      const id = opts.paymentId === false || opts.paymentId === undefined ? undefined
        : typeof opts.paymentId === 'function' ? opts.paymentId({ requirements })
        : opts.paymentId;
      const extensions = declared && id ? { 'payment-identifier': { info: { required: false, id } } } : undefined;
      return { x402Version, payload: { proof }, ...(extensions ? { extensions } : {}) };
    },

    schemeHooks: {
      async onPaymentResponse({ settleResponse, paymentPayload, requirements }) {
        if (!settleResponse) return; // no PAYMENT-RESPONSE (a 402 again): the caller sees the answer
        const challenge = ((paymentPayload.payload?.proof as PaymentProof | undefined)?.challenge ?? requirements.extra?.challenge) as PriceChallenge;
        const receipt = settleResponse.extra?.receipt;
        if (receipt === undefined) throw new AgentpayError('INVALID_RECEIPT', 'the seller\'s PAYMENT-RESPONSE carries no agentpay receipt (extra.receipt)', { body: { settleResponse } });
        const r = await payer.verifiedReceipt(receipt, null, challenge);
        if (r) lastReceipt = r;
      },
    },

    checkingFetch(inner = globalThis.fetch, o = {}) {
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

/**
 * Checks the receipt of an x402 answer (for @x402/axios, which runs no response hooks):
 * `paymentResponse` is the PAYMENT-RESPONSE header value, `body` the exact bytes received
 * (null: not at hand, the hash is not checked), `challenge` the one paid (default: the
 * receipt's own fields must then match the payer's wallet only). Throws INVALID_RECEIPT.
 */
export async function verifyAgentpaySettlement(payer: Payer, paymentResponse: string, body: Uint8Array | null, challenge: PriceChallenge): Promise<Receipt> {
  let s: X402SettlementResponse;
  try {
    s = decodeX402Header<X402SettlementResponse>(paymentResponse);
  } catch {
    throw new AgentpayError('INVALID_RECEIPT', 'PAYMENT-RESPONSE is not base64 of a JSON settlement response', {});
  }
  const r = await payer.verifiedReceipt(s.extra?.receipt, body, challenge);
  if (!r) throw new AgentpayError('INVALID_RECEIPT', 'the seller\'s PAYMENT-RESPONSE carries no agentpay receipt (extra.receipt)', { body: { settleResponse: s } });
  return r;
}

/** A fresh x402 payment-identifier (`pay_` + 32 hex): make one per logical call and pass it as `paymentId` to retry that call safely. */
export { newPaymentId } from './client-common.js';
