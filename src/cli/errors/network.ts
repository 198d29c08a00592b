/** Network and TLS failures: the gateway could not be reached, or its certificate not trusted. */
import { AgentpayError } from 'agentpay-sdk/errors';
import { EXIT } from './cli-error.js';
import type { Report, ReportContext } from './report.js';

const NETWORK_CODES = new Set([
  'ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE',
  'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED',
]);
const TLS_CODE = /CERT|SSL|TLS|EPROTO|SELF_SIGNED|UNABLE_TO_VERIFY|ALTNAME/;

/** The error codes along an error's `cause` chain (fetch wraps the socket error). */
function causeCodes(err: unknown): string[] {
  const codes: string[] = [];
  let e: unknown = err;
  for (let depth = 0; e && typeof e === 'object' && depth < 6; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    const nested = (e as { errors?: unknown[] }).errors; // AggregateError from happy eyeballs
    if (Array.isArray(nested)) codes.push(...nested.flatMap(causeCodes));
    e = (e as { cause?: unknown }).cause;
  }
  return codes;
}

/**
 * The network or TLS failure behind an error, if it is one: fetch's TypeError "fetch failed"
 * (some without a code, e.g. "bad port"), the SDK client's GATEWAY_UNAVAILABLE (no status,
 * the network error as its cause), or a socket error. `cause` is its code, e.g. ECONNREFUSED.
 */
export function networkFailure(err: unknown): { cause: string; tls: boolean } | undefined {
  const codes = causeCodes(err);
  const net = codes.find((c) => NETWORK_CODES.has(c));
  const fetchFailed = err instanceof TypeError && err.message === 'fetch failed';
  const sdkUnreachable = err instanceof AgentpayError && err.code === 'GATEWAY_UNAVAILABLE' && err.status === undefined;
  // a connection's failure only: OpenSSL's codes (ERR_OSSL_*) also come from parsing a key file
  // (every client connection here goes through fetch, undici or the SDK, which wrap TLS errors)
  if (!net && !fetchFailed && !sdkUnreachable) return undefined;
  const tls = codes.find((c) => TLS_CODE.test(c));
  if (tls) return { cause: tls, tls: true };
  const cause = net ?? (sdkUnreachable ? String(err.details.cause ?? 'network error') : (err as { cause?: { message?: string } }).cause?.message || 'network error');
  return { cause, tls: false };
}

export function connectionReport(err: unknown, ctx: ReportContext): Report | undefined {
  const failure = networkFailure(err);
  if (!failure) return undefined;
  const where = ctx.baseUrl ? ` at ${ctx.baseUrl}` : '';
  const { cause } = failure;
  if (failure.tls) {
    return {
      code: 'TLS_FAILED',
      message: `TLS connection to the gateway${where} failed (${cause})`,
      details: { cause },
      exit: EXIT.UNREACHABLE,
      tryNext: /WRONG_VERSION|PACKET_LENGTH/.test(cause)
        ? "that port does not speak TLS; use the gateway's HTTPS address (baseUrl), not its plain-HTTP one"
        : "trust the gateway's certificate authority: --ca PATH (a local gateway's is DATA_DIR/tls/ca.pem), --data-dir DIR, or NODE_EXTRA_CA_CERTS",
    };
  }
  return {
    code: 'GATEWAY_UNREACHABLE',
    message: `cannot reach the gateway${where} (${cause})`,
    details: { cause },
    exit: EXIT.UNREACHABLE,
    tryNext: 'is the gateway running? start one with: npx agentpay dev',
  };
}
