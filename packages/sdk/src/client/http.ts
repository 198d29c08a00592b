/**
 * The transport under the typed API client: JSON over fetch, the API key header, the
 * error envelope turned into AgentpayError. A custom CA (the local gateway's) is
 * supported on Node through undici, loaded only when asked for, so this file also
 * runs in browsers and edge runtimes.
 */
import { oldNameNotice } from '../deprecation.js';
import { AgentpayError } from '../errors.js';
import { missingSetting, withEnvDefaults, type EnvOption } from '../settings.js';

interface CommonClientOptions {
  apiKey?: string;
  /** PEM of a CA to trust (Node only), e.g. the local gateway's DATA_DIR/tls/ca.pem */
  ca?: string;
  fetch?: typeof fetch;
  headers?: Record<string, string>;
}

/**
 * The gateway is `gatewayUrl` (https://…); `baseUrl`, its old name, still works with a one-time notice.
 * Options not given are read from the environment (AGENTPAY_GATEWAY_URL, AGENTPAY_API_KEY, AGENTPAY_CA:
 * ../settings.ts); `env: false` reads nothing.
 */
export type ClientOptions = CommonClientOptions & EnvOption &
  (
    | { /** the gateway, e.g. https://127.0.0.1:4402 (default: AGENTPAY_GATEWAY_URL) */ gatewayUrl?: string; baseUrl?: undefined }
    | { /** @deprecated the old name of gatewayUrl */ baseUrl: string; gatewayUrl?: undefined }
  );

export interface RawResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
}

export interface RequestOptions {
  body?: unknown;
  query?: Record<string, string | number | undefined>;
  headers?: Record<string, string>;
  apiKey?: string | null;
  signal?: AbortSignal;
}

/** One request and its whole response text: what the API client needs of a transport. */
type Transport = (method: string, url: URL, headers: Record<string, string>, body: string | undefined, signal: AbortSignal | undefined) =>
  Promise<{ status: number; headers: Headers; text: string }>;

const onNode = typeof process !== 'undefined' && typeof process.versions?.node === 'string';

export class HttpClient {
  /** the gateway, without a trailing slash */
  readonly gatewayUrl: string;
  private readonly apiKey: string | undefined;
  private readonly extraHeaders: Record<string, string>;
  private readonly ca: string | undefined;
  private fetchImpl: Promise<typeof fetch> | undefined;
  private readonly transport: Promise<Transport>;
  /** the connection pools this client opened (undici's, on Node), closed by `close` */
  private readonly pools: Pool[] = [];

  constructor(given: ClientOptions = {}) {
    const opts = withEnvDefaults(given, given.baseUrl !== undefined && given.gatewayUrl === undefined ? ['apiKey', 'ca'] : ['gatewayUrl', 'apiKey', 'ca']);
    let url = opts.gatewayUrl;
    if (url === undefined && opts.baseUrl !== undefined) {
      oldNameNotice('baseUrl', 'gatewayUrl');
      url = opts.baseUrl;
    }
    if (typeof url !== 'string' || url === '') {
      throw missingSetting('AgentpayClient', 'gatewayUrl', ' (the gateway to talk to, e.g. https://127.0.0.1:4402)');
    }
    this.gatewayUrl = url.replace(/\/+$/, '');
    this.apiKey = opts.apiKey;
    this.extraHeaders = opts.headers ?? {};
    this.ca = opts.ca;
    if (opts.fetch) this.fetchImpl = Promise.resolve(opts.fetch);
    // On Node, undici's request() rather than fetch(): measured 2.1 ms -> 0.76 ms of CPU per
    // request (docs/performance.md); the seller middleware makes three per paid call.
    // undici is not a dependency of agentpay-sdk (the agentpay CLI has it): without it, Node's own
    // fetch does the work, which is enough unless a CA must be trusted per client
    this.transport = opts.fetch || !onNode
      ? Promise.resolve(fetchTransport(this.fetcher()))
      : undiciTransport(opts.ca, this.pools).catch((e: unknown) => {
        if (!isMissingModule(e)) throw e;
        return fetchTransport(this.fetcher());
      });
    this.transport.catch(() => {}); // surfaced on the first request, not as an unhandled rejection
  }

  /** @deprecated the old name of gatewayUrl */
  get baseUrl(): string {
    return this.gatewayUrl;
  }

  /** The fetch this client uses (with its CA), for callers that need raw requests. */
  fetcher(): Promise<typeof fetch> {
    this.fetchImpl ??= this.ca ? fetchWithCa(this.ca, this.pools) : Promise.resolve(globalThis.fetch.bind(globalThis));
    return this.fetchImpl;
  }

  /**
   * Closes the client's connections once the requests under way have their answers. Kept-alive
   * connections otherwise keep a Node process running until the gateway or undici times them out
   * (seconds), after a script's or a command's work is done. A closed client makes no more requests.
   */
  async close(): Promise<void> {
    await Promise.allSettled([this.transport, ...(this.fetchImpl ? [this.fetchImpl] : [])]);
    await Promise.allSettled(this.pools.splice(0).map((p) => p.close()));
  }

  async raw<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<RawResponse<T>> {
    const url = new URL(this.gatewayUrl + path);
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { accept: 'application/json', ...this.extraHeaders, ...opts.headers };
    const key = opts.apiKey === null ? undefined : (opts.apiKey ?? this.apiKey);
    if (key) headers['x-api-key'] = key;
    let body: string | undefined;
    if (opts.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(opts.body);
    }
    const send = await this.transport;
    let res: Awaited<ReturnType<Transport>>;
    try {
      res = await send(method, url, headers, body, opts.signal);
    } catch (error) {
      // aborted by the caller, or refused before any request (a CA this runtime cannot trust)
      if (opts.signal?.aborted || error instanceof AgentpayError) throw error;
      throw unreachable(url, error);
    }
    const text = res.text;
    let parsed: unknown = undefined;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    return { status: res.status, headers: res.headers, body: parsed as T };
  }

  async request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const res = await this.raw<T>(method, path, opts);
    if (res.status >= 400) throw toError(res);
    return res.body;
  }
}

export function toError(res: RawResponse): AgentpayError {
  const b = (res.body && typeof res.body === 'object' ? res.body : {}) as Record<string, unknown>;
  const e = b.error as { code?: string; message?: string; details?: Record<string, unknown> } | undefined;
  if (e?.code) {
    const { error: _e, ...rest } = b;
    return new AgentpayError(e.code, e.message ?? e.code, { status: res.status, details: e.details ?? {}, body: rest });
  }
  return new AgentpayError('HTTP_ERROR', `HTTP ${res.status}`, { status: res.status, body: b });
}

/**
 * The request never got an answer (refused, reset, DNS, TLS): a typed error like every refusal,
 * with no status and the network error as its `cause`. Nothing reached the gateway's handlers
 * that the caller can rely on, so a retry is the caller's call (payment operations are idempotent).
 */
function unreachable(url: URL, error: unknown): AgentpayError {
  const reason = networkReason(error);
  return new AgentpayError('GATEWAY_UNAVAILABLE', `could not reach the gateway at ${url.origin} (${reason}); check its address and that it is running, then retry`, {
    details: { url: url.origin, cause: reason },
    cause: error,
  });
}

/** The most telling part of a network error: the socket's code (ECONNREFUSED, a TLS code) or its message. */
function networkReason(error: unknown): string {
  let e: unknown = error;
  let message: string | undefined;
  for (let depth = 0; e && typeof e === 'object' && depth < 6; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'ERR_INVALID_STATE') return code;
    const m = (e as { message?: unknown }).message;
    if (typeof m === 'string' && m && m !== 'fetch failed') message ??= m;
    e = (e as { cause?: unknown }).cause;
  }
  return message ?? 'network error';
}

function fetchTransport(f: Promise<typeof fetch>): Transport {
  return async (method, url, headers, body, signal) => {
    const res = await (await f)(url, { method, headers, body, signal });
    return { status: res.status, headers: res.headers, text: await res.text() };
  };
}

/**
 * undici, on Node only. The name is not a literal so that bundlers (esbuild, webpack, vite,
 * wrangler) do not follow it into a browser or Workers bundle, where it cannot run and is never
 * called: bundling the SDK for those needs no setting.
 */
const UNDICI = 'undici';
const loadUndici = (): Promise<typeof import('undici')> => import(/* webpackIgnore: true */ /* @vite-ignore */ UNDICI);

/** A connection pool a client opened: undici's Agent. */
interface Pool {
  close(): Promise<void>;
}

/** undici's request() with a keep-alive pool (and the CA, if any), kept in `pools` for `close`. */
async function undiciTransport(ca: string | undefined, pools: Pool[]): Promise<Transport> {
  // undici's own Headers: the global one loads Node's bundled copy of undici, which compiles its HTTP
  // parser (WebAssembly) when loaded, and a process then waits for that compile before it can exit
  // (measured: 150 to 380 ms at the end of every `agentpay` command)
  const { Agent, request, Headers: ResponseHeaders } = await loadUndici();
  // A bounded pool: under a burst, requests queue for a warm connection instead of each
  // opening a new one (a TLS handshake costs more CPU than a dozen requests; bench: 956
  // handshakes in one open-loop run without a bound).
  const dispatcher = new Agent({ connections: 16, ...(ca ? { connect: { ca } } : {}) });
  pools.push(dispatcher);
  return async (method, url, headers, body, signal) => {
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(url, { method: method as 'GET', headers, body, signal, dispatcher });
    } catch (error) {
      if (signal?.aborted) throw signal.reason ?? error;
      throw error;
    }
    const text = await res.body.text();
    const h = new ResponseHeaders();
    for (const [k, v] of Object.entries(res.headers)) {
      if (Array.isArray(v)) for (const x of v) h.append(k, x);
      else if (v !== undefined) h.set(k, v);
    }
    return { status: res.statusCode, headers: h as unknown as Headers, text };
  };
}

/** True for the error of importing a package that is not installed. */
function isMissingModule(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
}

async function fetchWithCa(ca: string, pools: Pool[]): Promise<typeof fetch> {
  let undici: Awaited<ReturnType<typeof loadUndici>>;
  try {
    undici = await loadUndici();
  } catch (e) {
    if (!isMissingModule(e)) throw e;
    throw new AgentpayError('VALIDATION_FAILED', 'ca: trusting a CA per client needs the undici package on Node (npm install undici); or leave out ca and start node with NODE_EXTRA_CA_CERTS=<the CA file>', { details: { field: 'ca' } });
  }
  const { Agent, fetch: undiciFetch } = undici;
  const dispatcher = new Agent({ connect: { ca } });
  pools.push(dispatcher);
  return ((input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) =>
    undiciFetch(input as never, { ...(init as object), dispatcher } as never)) as unknown as typeof fetch;
}
