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
import { AGENTPAY_INTENT, AGENTPAY_SCHEME, agentpayChallengeFromPaymentRequest, AUTHORIZATION_HEADER, encodePaymentCredential, type PaymentChallengeParams, type PaymentCredential } from './wire.js';
import { AGENTPAY_SESSION_INTENT, paymentSessionPayload, sessionDetailsOf, sessionStepOf } from './session-wire.js';
import { DialectSessions, type SessionPluginOptions, type StraightEncoder } from './session-client.js';
import type { Session } from '../contract/sessions.js';
import type { PriceChallenge } from '../protocol.js';

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

// ---- payment sessions: the `session` intent of method `agentpay` ----

export { AGENTPAY_SESSION_INTENT } from './session-wire.js';
export { DialectSessions, type SessionPluginOptions } from './session-client.js';

/** The session method definition (mppx Method.from shape): intent `session`, payload discriminated on `action`. */
export const agentpaySession = {
  name: AGENTPAY_SCHEME,
  intent: AGENTPAY_SESSION_INTENT,
  schema: {
    credential: {
      payload: parser<Record<string, unknown>>((v) => (isObject(v) && typeof sessionStepOf(v) !== 'string' ? null : `payload: ${isObject(v) ? String(sessionStepOf(v)) : 'must be an object'}`)),
    },
    request: parser<Record<string, unknown>>((v) => {
      if (!isObject(v)) return 'request: must be an object';
      if (typeof v.amount !== 'string' || typeof v.currency !== 'string') return 'request.amount and request.currency: strings are required';
      return sessionDetailsOf(v.methodDetails) ? null : 'request.methodDetails: the agentpay session details (requestHash, session) are required';
    }),
  },
} as const;

export interface AgentpayMppxSessionMethod {
  readonly name: 'agentpay';
  readonly intent: 'session';
  readonly schema: typeof agentpaySession.schema;
  /** returns the `Authorization` value: `Payment <base64url credential>` with an open, a voucher or a close */
  createCredential(args: { challenge: MppxChallenge; context?: unknown }): Promise<string>;
}

export interface AgentpayMppxSession {
  /** give to `Mppx.create({ methods: [method] })` */
  readonly method: AgentpayMppxSessionMethod;
  readonly payer: Payer;
  /** the sessions this method holds */
  readonly sessions: DialectSessions;
  /**
   * the inner fetch for `Mppx.create({ fetch })` (needed: mppx hands no answer to its methods):
   * takes in each session answer (the grant, a corrective 402's state, the receipt checked against
   * the exact bytes) and checks per-call receipts as `agentpayMppx().fetch` does
   */
  fetch(inner?: typeof fetch, o?: ReceiptCheckOptions): typeof fetch;
  /** Closes every session at its seller: the seller claims what it served, the rest of each cap goes back to the wallet. */
  closeAll(inner?: typeof fetch): Promise<Session[]>;
}

/**
 * Pays an agentpay seller's `session` challenge with a payment session (docs/sdk.md § Sessions
 * with stock clients):
 *
 *   const session = agentpayMppxSession({ gatewayUrl, walletId, privateKeyPem, maxPriceMinor: '500', capMinor: '5000' });
 *   const mppx = Mppx.create({ methods: [session.method], fetch: session.fetch(), polyfill: false });
 *   ... await mppx.fetch(url) many times ...
 *   await session.closeAll();
 *
 * The first call's credential is the open (our open request, signed by the wallet's key); the
 * seller's corrective 402 brings the grant in a new session challenge, and mppx's retry carries
 * the first voucher. Later calls carry a voucher each; answers carry `Payment-Receipt` with the
 * seller-signed session receipt.
 */
export function agentpayMppxSession(opts: AgentpayPluginOptions & SessionPluginOptions): AgentpayMppxSession {
  const payer = payerOf(opts);
  const sessions = new DialectSessions(payer, opts);
  const header: StraightEncoder = (step, echo) => {
    const challenge = (echo ?? { id: 'session', method: AGENTPAY_SCHEME, intent: AGENTPAY_SESSION_INTENT, request: {} }) as PaymentCredential['challenge'];
    return [AUTHORIZATION_HEADER, encodePaymentCredential({ challenge, payload: paymentSessionPayload(step), source: payer.walletId })];
  };
  return {
    payer,
    sessions,
    method: {
      ...agentpaySession,
      async createCredential({ challenge }) {
        const request = agentpaySession.schema.request.parse(challenge.request);
        const details = sessionDetailsOf(request.methodDetails)!;
        let signed: PriceChallenge | undefined;
        if (details.challenge !== undefined) {
          signed = await verifiedOfferedChallenge(payer, details.challenge);
          if (challenge.method !== AGENTPAY_SCHEME || request.amount !== signed.amountMinor || String(request.currency).toLowerCase() !== signed.currency.toLowerCase()) {
            throw mismatch('Payment session challenge (amount or currency)', { id: challenge.id, amount: request.amount, currency: request.currency, amountMinor: signed.amountMinor });
          }
          payer.checkChallenge?.(signed); // the ceiling and expiry, as signProof checks them
        }
        const step = await sessions.step(signed, details, challenge as unknown as Record<string, unknown>);
        return encodePaymentCredential({ challenge: challenge as PaymentCredential['challenge'], payload: paymentSessionPayload(step), source: payer.walletId });
      },
    },
    fetch(inner = globalThis.fetch, o = {}) {
      return sessions.fetch(receiptCheckingFetch(payer, inner, o), header);
    },
    closeAll(inner = globalThis.fetch) {
      return sessions.closeAll((where, step, echo) => inner(where.url, { method: where.method, headers: Object.fromEntries([header(step, echo, where)]) }));
    },
  };
}
