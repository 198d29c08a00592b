/**
 * `agentpay-sdk/buyer/axios`: an axios instance that pays, with the agent's wallet.
 *
 *   import axios from 'axios';
 *   import { createBuyer } from 'agentpay-sdk/buyer';
 *   import { withAgentpay } from 'agentpay-sdk/buyer/axios';
 *
 *   const api = withAgentpay(axios.create(), createBuyer({ gatewayUrl, walletId, privateKeyPem, maxPriceMinor: '500' }));
 *   const res = await api.get('https://seller.example/forecast');
 *   res.data;     // as axios would give it
 *   res.receipt;  // the verified, platform-signed receipt (null for a free call)
 *
 * A response interceptor: a seller's 402 goes through the buyer's own payer, the same steps as
 * `buyer.fetch` (../buyer/index.ts): the challenge is verified against the platform key, a
 * challenge for another capability than `config.agentpay.capabilityId`, a price above the
 * ceiling (the buyer's `maxPriceMinor`, default DEFAULT_MAX_PRICE_MINOR, or
 * `config.agentpay.maxPriceMinor`) and an expired quote are refused before anything is signed;
 * then the request is sent once more with `x-payment`, its exact bytes are read
 * (`responseType: 'arraybuffer'`, `accept-encoding: identity`, no redirect followed) and the
 * receipt is verified against them before the response is handed back, transformed as the
 * request asked (JSON, text, arraybuffer). Every refusal is an AgentpayError with the
 * specification's code; a paid request that got no answer is SELLER_UNREACHABLE with `paid: true`.
 *
 * Trusting a seller's certificate is axios's business (`httpsAgent` on Node); the buyer's
 * `ca` is for the gateway only. A request body is sent twice, so it must be replayable
 * (a string, an object, bytes; not a stream). With `responseType: 'stream'` or `'blob'` the
 * 402 is read whole to pay it, and the paid answer is delivered as the bytes that were
 * verified (a Buffer on Node, an ArrayBuffer elsewhere). The config's `signal` applies until the proof is sent (CANCELLED), as with fetch.
 */
import { AxiosError, AxiosHeaders, type AxiosInstance, type AxiosResponse, type AxiosResponseTransformer, type InternalAxiosRequestConfig } from 'axios';
import { toError } from '../client/http.js';
import { AgentpayError } from '../errors.js';
import { decodeHeader, encodeHeader, PAYMENT_HEADER, RECEIPT_HEADER, type PriceChallenge, type Receipt } from '../protocol.js';
import { PAID_BUT_UNANSWERED, type Buyer } from './index.js';
import { cancelled, ceilingOf, createPayer, type Payer, type PayerOptions } from './payer.js';
import { offerOf, poolOf, type Send, type SentAnswer } from './session-pool.js';
import { requestFingerprint } from '../seller/idempotency.js';
import type { SessionReceipt } from '../contract/sessions.js';

/** Per request: `axios.get(url, { agentpay: { maxPriceMinor: '50', capabilityId: 'cap_…' } })`. */
export interface AgentpayRequestOptions {
  /** ceiling for this call, overriding the buyer's */
  maxPriceMinor?: string | bigint;
  /** the capability this call is meant to buy: a challenge for another is refused (CHALLENGE_MISMATCH) before signing */
  capabilityId?: string;
}

declare module 'axios' {
  interface AxiosRequestConfig {
    /** agentpay: this call's ceiling and the capability it is meant to buy (withAgentpay) */
    agentpay?: AgentpayRequestOptions;
  }
  interface AxiosResponse {
    /** withAgentpay: the verified receipt of a paid call; null (or absent) for a free one */
    receipt?: Receipt | null;
    /** withAgentpay: the challenge that was paid */
    challenge?: PriceChallenge | null;
    /** withAgentpay with a buyer from createBuyer: a call paid with a session's voucher, its seller-signed receipt (null: failed, not charged) */
    sessionReceipt?: SessionReceipt | null;
  }
}

/** Marks the request carrying the proof: its answer is the interceptor's, not a new 402 to pay. */
const PAID = Symbol('agentpay.paid');
type Config = InternalAxiosRequestConfig & { [PAID]?: true };

const installed = new WeakMap<AxiosInstance, number>();

const payerOf = (b: Buyer | Payer | PayerOptions): Payer => ('payer' in b ? b.payer : 'signProof' in b ? b : createPayer(b));

function bytesOf(data: unknown): Uint8Array {
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  if (typeof data === 'string') return new TextEncoder().encode(data);
  return new Uint8Array(0);
}

/** A streamed (`responseType: 'stream'`: a Node Readable, a web ReadableStream) or Blob body, read whole; else as it is. */
async function readWhole(data: unknown): Promise<unknown> {
  if (typeof Blob !== 'undefined' && data instanceof Blob) return new Uint8Array(await data.arrayBuffer());
  if (data === null || typeof data !== 'object' || !(Symbol.asyncIterator in data)) return data;
  const chunks: Uint8Array[] = [];
  for await (const chunk of data as AsyncIterable<unknown>) chunks.push(typeof chunk === 'string' ? new TextEncoder().encode(chunk) : bytesOf(chunk));
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/** The 402's body as JSON, whatever responseType the request asked for; undefined when it is not JSON. */
function bodyOf402(data: unknown): unknown {
  if (data !== null && typeof data === 'object' && !(data instanceof ArrayBuffer) && !ArrayBuffer.isView(data)) return data;
  const text = typeof data === 'string' ? data : data instanceof ArrayBuffer || ArrayBuffer.isView(data) ? new TextDecoder().decode(bytesOf(data)) : undefined;
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The URL the 402 came from after any redirects (Node's http adapter and XHR say it), else undefined. */
function answeredUrl(response: AxiosResponse): string | undefined {
  const req = response.request as { res?: { responseUrl?: unknown }; responseURL?: unknown } | undefined;
  const url = req?.res?.responseUrl ?? req?.responseURL;
  return typeof url === 'string' && url ? url : undefined;
}

/** The paid answer's bytes as the original request asked for them, through its own transformResponse. */
function asRequested(config: Config, raw: unknown, bytes: Uint8Array, response: AxiosResponse): unknown {
  const type = config.responseType;
  if (type === 'arraybuffer' || type === 'stream' || type === 'blob') return raw;
  let data: unknown = new TextDecoder().decode(bytes);
  const fns = config.transformResponse === undefined ? [] : Array.isArray(config.transformResponse) ? config.transformResponse : [config.transformResponse];
  for (const fn of fns as AxiosResponseTransformer[]) data = fn.call(config, data, response.headers as never, response.status);
  return data;
}

/**
 * Makes `instance` pay sellers' 402s with the agent's wallet: see the module comment. `buyer` is
 * a buyer from createBuyer, its payer, or createBuyer's options (a malformed key or ceiling is
 * refused here, VALIDATION_FAILED). Returns the same instance; installing twice does nothing.
 * Remove it with `instance.interceptors.response.eject(agentpayInterceptorId(instance))`.
 */
export function withAgentpay<T extends AxiosInstance>(instance: T, buyer: Buyer | Payer | PayerOptions): T {
  if (installed.has(instance)) return instance;
  const payer = payerOf(buyer);

  async function pay(error: unknown): Promise<AxiosResponse> {
    if (!(error instanceof AxiosError) || !error.response || !error.config || error.response.status !== 402 || (error.config as Config)[PAID]) throw error;
    const config = error.config as Config;
    const first = error.response;
    const { maxPriceMinor, capabilityId } = config.agentpay ?? {};
    if (maxPriceMinor !== undefined) ceilingOf(maxPriceMinor, 'agentpay.maxPriceMinor');
    const signal = config.signal as AbortSignal | undefined;
    let body402: unknown;
    const challenge = await readWhole(first.data).then((data) => payer.verifiedChallenge((body402 = bodyOf402(data)))).catch((e: unknown) => {
      throw signal?.aborted ? cancelled() : e;
    });
    if (!challenge) throw error; // a 402 that is not the protocol's: axios's own error, as without agentpay
    const url = answeredUrl(first);
    const { signal: _signal, cancelToken: _cancel, ...rest } = config;

    // a seller that offers a session, and a buyer from createBuyer: paid with its session (docs/sdk.md § Payment sessions)
    const pool = poolOf(payer);
    const method = (config.method ?? 'get').toUpperCase();
    let where: URL | undefined;
    try {
      where = new URL(url ?? instance.getUri(config));
    } catch {
      where = undefined; // a relative URL (a browser's): paid per-call
    }
    if (pool && where && method !== 'HEAD' && pool.wants(offerOf(body402, challenge), where.origin)) {
      const at = where;
      payer.checkChallenge?.(challenge, { maxPriceMinor, capabilityId });
      if (signal?.aborted) throw cancelled();
      const sender = (withBody: boolean): Send => async (extra) => {
        // a copy: AxiosHeaders.from hands back the config's own headers, and one request's session header must not reach the next
        const h = new AxiosHeaders(AxiosHeaders.from(config.headers as never).toJSON() as never);
        for (const [k, v] of Object.entries(extra)) h.set(k, v);
        h.set('accept-encoding', 'identity');
        const sessionConfig = {
          ...rest, url: at.href, baseURL: undefined, params: undefined, headers: h, responseType: 'arraybuffer', transformResponse: [(d: unknown) => d],
          validateStatus: () => true, maxRedirects: 0, [PAID]: true, ...(withBody ? {} : { data: undefined }),
        } as Config;
        const r = await instance.request(sessionConfig).catch((e: unknown) => {
          throw e instanceof AgentpayError ? e : new AgentpayError('SELLER_UNREACHABLE', `could not reach the seller at ${at.href} after a session request was sent: ${PAID_BUT_UNANSWERED}`, { details: { url: at.href, paid: true }, cause: e });
        });
        return { status: r.status, header: (n: string) => (typeof r.headers[n] === 'string' ? (r.headers[n] as string) : null), bytes: bytesOf(r.data), response: r } as SentAnswer & { response: AxiosResponse };
      };
      const requestHash = await requestFingerprint(method, at.pathname + at.search);
      const paid = await pool.pay({ origin: at.origin, challenge, requestHash, send: sender(true), closer: sender(false) });
      if (paid) {
        const r = (paid.answer as SentAnswer & { response: AxiosResponse }).response;
        const out: AxiosResponse = Object.assign(r, { config, receipt: null, challenge, sessionReceipt: paid.receipt });
        out.data = asRequested(config, r.data, paid.answer.bytes, out);
        const validate = config.validateStatus;
        if (!validate || validate(r.status)) return out;
        throw new AxiosError(`Request failed with status code ${r.status}`, r.status >= 500 ? AxiosError.ERR_BAD_RESPONSE : AxiosError.ERR_BAD_REQUEST, config, r.request, out);
      }
    }
    const proof = await payer.signProof(challenge, { maxPriceMinor, signal, capabilityId });

    // From here the purchase proceeds: the signal no longer applies (docs/protocol.md).
    const headers = AxiosHeaders.from(config.headers as never);
    headers.set(PAYMENT_HEADER, encodeHeader(proof));
    // the receipt covers the bytes the seller sent: ask for them uncompressed (see buyer/index.ts)
    headers.set('accept-encoding', 'identity');
    const paidConfig = {
      ...rest,
      ...(url ? { url, baseURL: undefined, params: undefined } : {}),
      headers,
      responseType: 'arraybuffer',
      transformResponse: [(d: unknown) => d],
      validateStatus: () => true,
      // the proof goes to the URL that quoted it, and a redirect of the paid call is not followed
      maxRedirects: 0,
      [PAID]: true,
    } as Config;
    let res: AxiosResponse;
    try {
      res = await instance.request(paidConfig);
    } catch (e) {
      if (e instanceof AgentpayError) throw e;
      const where = url ?? instance.getUri(config);
      throw new AgentpayError('SELLER_UNREACHABLE', `could not reach the seller at ${where} after the payment proof was sent: ${PAID_BUT_UNANSWERED}`, { details: { url: where, paid: true }, cause: e });
    }
    const bytes = bytesOf(res.data);
    const header = res.headers[RECEIPT_HEADER] as unknown;
    let receipt: Receipt | null = null;
    if (typeof header === 'string') {
      let r: unknown;
      try {
        r = decodeHeader(header);
      } catch {
        throw new AgentpayError('INVALID_RECEIPT', `the seller's receipt header ${RECEIPT_HEADER} is not base64url JSON`, { body: { receipt: undefined } });
      }
      receipt = await payer.verifiedReceipt(r, bytes, challenge);
    }
    if (!receipt && res.status >= 400) {
      // refused before the handler ran: the gateway's envelope, passed through by the seller
      throw toError({ status: res.status, headers: new Headers(), body: bodyOf402(res.data) });
    }
    const out: AxiosResponse = Object.assign(res, { config, receipt, challenge });
    out.data = asRequested(config, res.data, bytes, out);
    const validate = config.validateStatus;
    if (!validate || validate(res.status)) return out;
    // as axios settles it: a paid call the seller answered with an error status is rejected, its receipt attached
    throw new AxiosError(`Request failed with status code ${res.status}`, res.status >= 500 ? AxiosError.ERR_BAD_RESPONSE : AxiosError.ERR_BAD_REQUEST, config, res.request, out);
  }

  // answers without an error status pass as they are, marked as free (receipt: null)
  const free = (res: AxiosResponse): AxiosResponse => {
    if (!('receipt' in res)) Object.assign(res, { receipt: null, challenge: null });
    return res;
  };
  installed.set(instance, instance.interceptors.response.use(free, pay));
  return instance;
}

/** The id of the interceptor withAgentpay installed on `instance` (for `interceptors.response.eject`), or undefined. */
export function agentpayInterceptorId(instance: AxiosInstance): number | undefined {
  return installed.get(instance);
}

export { AgentpayError } from '../errors.js';
export { DEFAULT_MAX_PRICE_MINOR } from './payer.js';
