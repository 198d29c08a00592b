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
import { AGENTPAY_SCHEME, decodeX402Header, encodeX402Header, X402_PAYMENT_SIGNATURE_HEADER, type X402PaymentPayload, type X402PaymentRequired, type X402PaymentRequirements, type X402SettlementResponse } from './wire.js';
import { sessionDetailsOf, sessionStepOf, X402_SESSION_SCHEME, x402SessionPayload } from './session-wire.js';
import { DialectSessions, type SessionPluginOptions, type StraightEncoder } from './session-client.js';
import type { Session, SessionReceipt } from '../contract/sessions.js';

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

// ---- payment sessions: x402's `batch-settlement` scheme on the agentpay network ----

export { X402_SESSION_SCHEME } from './session-wire.js';
export { DialectSessions, type SessionPluginOptions } from './session-client.js';

/** The `batch-settlement` scheme as an @x402/core SchemeNetworkClient: pays an agentpay seller with a payment session. */
export interface AgentpayX402SessionScheme {
  readonly scheme: 'batch-settlement';
  readonly payer: Payer;
  /** the sessions this scheme holds */
  readonly sessions: DialectSessions;
  readonly schemeHooks: { onPaymentResponse(ctx: X402ResponseHookContext): Promise<{ recovered: true } | void> };
  findDefaultAsset(asset: string, network: string): { asset: string; decimals: number; symbol: string } | undefined;
  createPaymentPayload(x402Version: number, requirements: X402PaymentRequirements, context?: X402PayloadContext): Promise<X402PayloadResult>;
  /**
   * A fetch for wrapFetchWithPayment: takes in each session answer with the exact bytes received
   * (the receipt's response hash checked), and checks per-call receipts as `checkingFetch` does.
   */
  checkingFetch(inner?: typeof fetch, o?: ReceiptCheckOptions): typeof fetch;
  /** Closes every session at its seller (x402's refund): the seller claims what it served, the rest of each cap goes back to the wallet. */
  closeAll(inner?: typeof fetch): Promise<Session[]>;
}

/**
 * Pays an agentpay seller's `batch-settlement` entry with a payment session (docs/sdk.md §
 * Sessions with stock clients):
 *
 *   const session = createAgentpayX402SessionScheme({ gatewayUrl, walletId, privateKeyPem, maxPriceMinor: '500', capMinor: '5000' });
 *   const client = new x402Client().register('agentpay:*', session);
 *   const pay = wrapFetchWithPayment(session.checkingFetch(fetch), client);
 *   ... await pay(url) many times ...
 *   await session.closeAll();
 *
 * The first call's payment is the open (x402's deposit: our open request, signed by the wallet's
 * key; the cap is held on the wallet, not deposited on a chain); the seller's corrective 402 brings
 * the grant, and the response hook has @x402/fetch retry with the first voucher. Later calls carry a
 * voucher each. A voucher overtaken by a parallel call's is resynced from the corrective 402 (one
 * retry, @x402/fetch's).
 */
export function createAgentpayX402SessionScheme(opts: AgentpayX402Options & SessionPluginOptions): AgentpayX402SessionScheme {
  const payer = payerOf(opts);
  const decimals = opts.assetDecimals ?? 2;
  const sessions = new DialectSessions(payer, opts);
  const header: StraightEncoder = (step, echo, where) =>
    [X402_PAYMENT_SIGNATURE_HEADER, encodeX402Header({ x402Version: 2, resource: { url: where.url }, accepted: echo ?? { scheme: X402_SESSION_SCHEME }, payload: x402SessionPayload(step) })];
  return {
    scheme: X402_SESSION_SCHEME,
    payer,
    sessions,

    findDefaultAsset(asset, network) {
      if (!network.startsWith(`${AGENTPAY_SCHEME}:`) || !/^[A-Z]{3,5}$/.test(asset)) return undefined;
      return { asset, decimals, symbol: asset };
    },

    async createPaymentPayload(x402Version, requirements, context) {
      const details = sessionDetailsOf(requirements.extra);
      if (!details) throw new AgentpayError('INVALID_CHALLENGE', 'the seller\'s batch-settlement entry carries no agentpay session details (extra.requestHash, extra.session); nothing was signed', { status: 402 });
      let challenge: PriceChallenge | undefined;
      if (details.challenge !== undefined) {
        challenge = await verifiedOfferedChallenge(payer, details.challenge);
        if (requirements.amount !== challenge.amountMinor || requirements.asset !== challenge.currency || requirements.payTo !== challenge.payTo) {
          throw mismatch('x402 batch-settlement entry (amount, asset or payTo)', { amount: requirements.amount, asset: requirements.asset, payTo: requirements.payTo, challengeAmountMinor: challenge.amountMinor });
        }
        if (context?.maxAmountPerPayment !== undefined && /^\d+$/.test(context.maxAmountPerPayment) && BigInt(challenge.amountMinor) > BigInt(context.maxAmountPerPayment)) {
          throw new AgentpayError('PRICE_ABOVE_CLIENT_LIMIT', `the price ${challenge.amountMinor} ${challenge.currency} minor units is above the x402 client's spend cap of ${context.maxAmountPerPayment}; nothing was signed`, { details: { amountMinor: challenge.amountMinor, maxAmountPerPayment: context.maxAmountPerPayment } });
        }
        payer.checkChallenge?.(challenge); // the ceiling and expiry, as signProof checks them
      }
      const step = await sessions.step(challenge, details, requirements as unknown as Record<string, unknown>);
      return { x402Version, payload: x402SessionPayload(step) };
    },

    schemeHooks: {
      // without the checking fetch, the answer is taken in here (the receipt without the bytes); the fetch's bookkeeping makes this a no-op
      async onPaymentResponse({ paymentPayload, settleResponse, paymentRequired }) {
        const step = sessionStepOf(paymentPayload.payload ?? {});
        if (typeof step === 'string') return;
        const entry = (paymentRequired as X402PaymentRequired | undefined)?.accepts?.find((a) => a.scheme === X402_SESSION_SCHEME);
        const details = sessionDetailsOf(entry?.extra);
        if (step.kind === 'open') {
          if (!details?.grant) return;
          await sessions.granted(details.grant);
          return { recovered: true }; // @x402/fetch pays its retry with the first voucher
        }
        if (step.kind !== 'voucher') return;
        if (details) {
          sessions.refused(step.voucher, details);
          return details.refusal === 'VOUCHER_STALE' ? { recovered: true } : undefined;
        }
        const receipt = settleResponse?.extra?.sessionReceipt as SessionReceipt | undefined;
        await sessions.answered(step.voucher, settleResponse ? 200 : 500, receipt, null, paymentPayload.resource?.url ? { url: paymentPayload.resource.url, method: 'GET' } : undefined);
      },
    },

    checkingFetch(inner = globalThis.fetch, o = {}) {
      return sessions.fetch(receiptCheckingFetch(payer, inner, o), header);
    },

    closeAll(inner = globalThis.fetch) {
      return sessions.closeAll((where, step, echo) => inner(where.url, { method: where.method, headers: Object.fromEntries([header(step, echo, where)]) }));
    },
  };
}
