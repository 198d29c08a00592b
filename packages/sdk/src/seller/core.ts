/**
 * The seller side of the payment protocol, free of any web framework: the table of
 * the specification's "Payment protocol routes" in two steps.
 *
 *   admit(capabilityId, payment)           -> answer now (402 challenge, or the gateway's
 *                                            refusal as is) | paid call: run the handler
 *   settle(paid call, outcome, exact bytes) -> complete (2xx/3xx) | fail client_error (4xx)
 *                                            | fail provider_error (5xx, thrown, MCP isError)
 *
 * The adapters (fastify.ts, node.ts) only move bytes between their framework and these
 * two calls; the handler never runs before `admit` says `paid`.
 */
import { createHash } from 'node:crypto';
import { AgentpayClient } from '../client/index.js';
import { AgentpayError } from '../errors.js';
import { encodeHeader, paymentRequiredBody, RECEIPT_HEADER, type PaymentProof, type Receipt } from '../protocol.js';
import type { Authorization, Challenge } from '../types.js';
import { GatewayBatcher, type BatchOptions } from './batcher.js';

export interface SellerOptions {
  /** the gateway the capability is published on (https://…) */
  gatewayUrl: string;
  /** a provider key with scope payments:write */
  apiKey: string;
  /** PEM of a CA to trust for the gateway (Node only), e.g. a local gateway's DATA_DIR/tls/ca.pem */
  ca?: string;
  /** the capability every paid route of this seller sells */
  capabilityId?: string;
  /** per route: 'GET /weather' or '/weather' (any method) -> capability id; wins over capabilityId */
  routes?: Record<string, string>;
  /**
   * How long a paid handler may take, ms (default 30 000; 0: no limit). Past it the buyer gets
   * `504 HANDLER_TIMEOUT`, the call fails as `provider_error` (refund; counts toward the breaker)
   * and whatever the handler sends later is dropped.
   */
  handlerTimeoutMs?: number;
  /** retries of `complete` when the gateway is unreachable or answers 5xx (default 4 tries, 250 ms doubling) */
  completeRetry?: { attempts?: number; baseDelayMs?: number };
  /** told about every problem the buyer cannot see (default: console.error) */
  onError?: (error: unknown, context: { stage: 'challenge' | 'authorize' | 'complete' | 'fail'; transactionId?: string }) => void;
  /** fetch used for the gateway (tests, proxies) */
  fetch?: typeof fetch;
  /**
   * Under load, the gateway calls of concurrent paid calls share requests (POST /v1/x402/batch);
   * an idle seller sends each at once on its own route. `false`: every call on its own route.
   */
  batch?: BatchOptions | false;
}

/** A call whose payment the gateway authorized: a hold is placed, the handler may run. */
export interface PaidCall {
  transactionId: string;
  capabilityId: string;
  walletId: string;
  amountMinor: string;
  currency: string;
}

/** An answer the adapter sends as is, without running the handler. */
export interface ImmediateAnswer {
  kind: 'answer';
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export type Admission = ImmediateAnswer | { kind: 'paid'; call: PaidCall };

export interface Settlement {
  /** headers to add to the response before sending the exact bytes that were hashed */
  headers: Record<string, string>;
  receipt: Receipt | null;
}

/**
 * How the handler ended. `body` is exactly what will be sent (and hashed). HTTP adapters give
 * `statusCode` (2xx/3xx complete, 4xx client_error, 5xx provider_error); `threw` (handler threw)
 * and `isError` (an MCP tool error result) fail as provider_error.
 */
export interface SettleOutcome {
  body: Uint8Array;
  statusCode?: number;
  threw?: boolean;
  isError?: boolean;
}

export interface SellerPayments {
  readonly client: AgentpayClient;
  /** the handler time limit the adapters enforce, ms; 0 or absent: none */
  readonly handlerTimeoutMs?: number;
  /** The capability a request sells, or undefined for a free route. */
  capabilityFor(method: string, routeOrPath: string): string | undefined;
  /** `payment`: the x-payment header as received, or the proof object (MCP `_meta`); absent: unpaid. */
  admit(capabilityId: string, payment: string | Record<string, unknown> | undefined): Promise<Admission>;
  settle(call: PaidCall, outcome: SettleOutcome): Promise<Settlement>;
}

/** sha256:<hex> of the exact bytes, synchronously (Node); protocol.ts has the WebCrypto one. */
export function responseHashSync(body: Uint8Array | string): string {
  return `sha256:${createHash('sha256').update(body).digest('hex')}`;
}

/** The error envelope the seller writes itself, the same as the gateway's. */
const errorBody = (code: string, message: string, details: Record<string, unknown> = {}) => JSON.stringify({ error: { code, message, details } });

/** The body a seller answers when a handler threw. */
export const INTERNAL_ERROR_BODY = errorBody('INTERNAL', 'internal error');

export const DEFAULT_HANDLER_TIMEOUT_MS = 30_000;

/** What the buyer gets (status 504) when a paid handler outlived `handlerTimeoutMs`; the call is refunded. */
export function handlerTimeoutBody(ms: number): string {
  return errorBody('HANDLER_TIMEOUT', `the seller's handler did not answer within ${ms} ms; you were refunded (see the failed receipt)`, { timeoutMs: ms });
}

/**
 * Statuses whose responses carry no body over HTTP (RFC 9110 §6.4.1): whatever a handler
 * writes with them never reaches the buyer, so the adapters hash and send an empty body.
 */
export function bodylessStatus(status: number): boolean {
  return status < 200 || status === 204 || status === 304;
}

/** A paid route answers HEAD with this: a response without a body has nothing to hash, pay for or carry a challenge. */
export const HEAD_NOT_ALLOWED_BODY = errorBody('METHOD_NOT_ALLOWED', 'paid routes do not answer HEAD: request the route with its own method (e.g. GET)');

const json = (status: number, value: unknown, headers: Record<string, string> = {}): ImmediateAnswer => ({
  kind: 'answer',
  status,
  headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  body: Buffer.from(JSON.stringify(value)),
});

/** The gateway's refusal, passed to the buyer with the gateway's status and envelope. */
function refusal(e: AgentpayError): ImmediateAnswer {
  return json(e.status ?? 502, { error: { code: e.code, message: e.message, details: e.details }, ...e.body });
}

/**
 * The gateway could not be reached, or its answer was lost: nothing was charged and the handler
 * did not run. An authorization whose answer was lost may have placed a hold on the buyer's
 * wallet; the gateway releases it when its in-flight time runs out (15 minutes).
 */
function unavailable(stage: string): ImmediateAnswer {
  const held = stage === 'authorize' ? ' (a hold the gateway may have placed is released within 15 minutes)' : '';
  return json(503, { error: { code: 'GATEWAY_UNAVAILABLE', message: `the seller could not reach its payment gateway (${stage}); nothing was charged${held}, retry later`, details: { stage } } }, { 'retry-after': '5' });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Worth retrying: the request may not have arrived, or the gateway had a moment. */
const transient = (e: unknown) =>
  !(e instanceof AgentpayError) || e.code === 'GATEWAY_UNAVAILABLE' || (e.status ?? 0) >= 500 || e.status === 429;

export function createSellerPayments(opts: SellerOptions): SellerPayments {
  const client = new AgentpayClient({ gatewayUrl: opts.gatewayUrl, apiKey: opts.apiKey, ...(opts.ca ? { ca: opts.ca } : {}), ...(opts.fetch ? { fetch: opts.fetch } : {}) });
  const gateway = new GatewayBatcher(client, opts.batch === false ? { maxInFlight: Infinity } : opts.batch);
  const attempts = Math.max(1, opts.completeRetry?.attempts ?? 4);
  const baseDelayMs = opts.completeRetry?.baseDelayMs ?? 250;
  const report = opts.onError ?? ((error, c) => console.error(`agentpay seller: ${c.stage}${c.transactionId ? ` ${c.transactionId}` : ''} failed:`, error));

  /** complete/fail are idempotent at the gateway, so retrying cannot pay twice. */
  async function withRetry<T>(fn: () => Promise<T>): Promise<T> {
    for (let i = 1; ; i++) {
      try {
        return await fn();
      } catch (e) {
        if (i >= attempts || !transient(e)) throw e;
        await sleep(baseDelayMs * 2 ** (i - 1));
      }
    }
  }

  return {
    client,
    handlerTimeoutMs: opts.handlerTimeoutMs ?? DEFAULT_HANDLER_TIMEOUT_MS,

    capabilityFor(method, routeOrPath) {
      const routes = opts.routes ?? {};
      return routes[`${method.toUpperCase()} ${routeOrPath}`] ?? routes[routeOrPath] ?? opts.capabilityId;
    },

    async admit(capabilityId, payment) {
      if (!payment) {
        try {
          const { challenge } = (await gateway.run({ op: 'challenge', capabilityId })) as { challenge: Challenge };
          return json(402, paymentRequiredBody(challenge));
        } catch (e) {
          report(e, { stage: 'challenge' });
          return e instanceof AgentpayError && e.status !== undefined && e.status < 500 ? refusal(e) : unavailable('challenge');
        }
      }
      try {
        // the payment goes as received: the gateway decodes and validates it
        const t = (await gateway.run({ op: 'authorize', capabilityId, payment: payment as PaymentProof | string })) as Authorization;
        return { kind: 'paid', call: { transactionId: t.transactionId, capabilityId, walletId: t.walletId, amountMinor: t.amountMinor, currency: t.currency } };
      } catch (e) {
        if (e instanceof AgentpayError && e.status !== undefined && e.status < 500) return refusal(e);
        report(e, { stage: 'authorize' });
        return unavailable('authorize');
      }
    },

    async settle(call, outcome): Promise<Settlement> {
      const responseHash = responseHashSync(outcome.body);
      const status = outcome.statusCode ?? 200;
      const providerError = outcome.threw === true || outcome.isError === true || status >= 500;
      const ok = !providerError && status < 400;
      const stage = ok ? 'complete' : 'fail';
      try {
        const { receipt } = (ok
          ? await withRetry(() => gateway.run({ op: 'complete', transactionId: call.transactionId, responseHash }))
          : await withRetry(() => gateway.run({
              op: 'fail',
              transactionId: call.transactionId,
              reason: providerError ? 'provider_error' : 'client_error',
              responseHash,
              ...(outcome.statusCode !== undefined ? { statusCode: outcome.statusCode } : {}),
            }))) as { receipt: Receipt };
        return { headers: { [RECEIPT_HEADER]: encodeHeader(receipt) }, receipt };
      } catch (e) {
        // The transaction stays authorized and durable at the gateway: a later complete
        // (same transactionId and hash) still settles it, otherwise the sweeper refunds
        // the buyer after inFlightTtlMs (15 minutes by default).
        report(e, { stage, transactionId: call.transactionId });
        return { headers: {}, receipt: null };
      }
    },
  };
}
