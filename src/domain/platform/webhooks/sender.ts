/**
 * How a delivery leaves the gateway: one POST, decided by the status line, within a hard
 * deadline. Injected, so tests can count or fail sends; the default is node's http/https client.
 *
 * The deadline covers everything (resolving the name, connecting, TLS, sending, the status line):
 * a receiver that drips its answer a byte at a time cannot hold a worker longer than that, where
 * a socket idle timeout would wait for as long as the drip lasts. The body of the answer is not
 * read: the status decides, and the connection is closed once it is known.
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { EgressPolicy, EgressRefused, literalAddress } from './egress.js';

export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** the hard deadline of the whole attempt */
  timeoutMs: number;
}

/** The endpoint's answer; a network failure, a refused address or the deadline rejects instead. */
export interface WebhookResponse {
  status: number;
}

export type WebhookSender = (req: WebhookRequest) => Promise<WebhookResponse>;

/** The attempt ran out of time. */
export class DeadlineExceeded extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
    this.name = 'DeadlineExceeded';
  }
}

export interface ResolvedAddress { address: string; family: number }
/** A name's addresses (dns.lookup with all: true by default; tests give their own). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

const systemResolver: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

/**
 * A `lookup` for node's client that resolves the name, refuses it unless every address is
 * allowed, and hands the checked addresses to the connection: what is checked is what is
 * connected to (nothing resolves the name a second time).
 */
export function pinnedLookup(policy: EgressPolicy, resolve: Resolver = systemResolver): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then((all) => {
      if (all.length === 0 || all.some((a) => !policy.allows(a.address))) throw new EgressRefused();
      const wanted = options.family === 4 || options.family === 6 ? all.filter((a) => a.family === options.family) : all;
      if (wanted.length === 0) throw new EgressRefused();
      if (options.all) callback(null, wanted);
      else callback(null, wanted[0]!.address, wanted[0]!.family);
    }).catch((e: unknown) => (callback as (err: NodeJS.ErrnoException) => void)(e as NodeJS.ErrnoException));
  };
}

export interface HttpSenderOptions {
  /** extra trusted certificates for https endpoints (a local receiver in tests) */
  ca?: string | Buffer;
  /** where deliveries may go (default: the production policy, no loopback, no allow-list) */
  egress?: EgressPolicy;
  resolve?: Resolver;
}

/** node's client, with the egress policy applied to every address it connects to. */
export function httpSender(opts: HttpSenderOptions = {}): WebhookSender {
  const policy = opts.egress ?? new EgressPolicy();
  const lookup = pinnedLookup(policy, opts.resolve);
  return (req) =>
    new Promise<WebhookResponse>((resolve, reject) => {
      const url = new URL(req.url);
      // node connects to a literal address without calling lookup: checked here instead
      const literal = literalAddress(url.hostname);
      if (literal !== undefined && !policy.allows(literal)) return reject(new EgressRefused());
      const lib = url.protocol === 'https:' ? https : http;
      let settled = false;
      const r = lib.request(url, {
        method: 'POST',
        headers: { ...req.headers, 'content-length': String(Buffer.byteLength(req.body)) },
        lookup,
        // a fresh connection each time: a pooled socket would skip the check of a new resolution
        agent: false,
        ...(url.protocol === 'https:' && opts.ca ? { ca: opts.ca } : {}),
      }, (res) => {
        settled = true;
        clearTimeout(deadline);
        resolve({ status: res.statusCode ?? 0 });
        // the status decides; whatever body follows is not waited for
        res.destroy();
      });
      const deadline = setTimeout(() => r.destroy(new DeadlineExceeded(req.timeoutMs)), req.timeoutMs);
      r.on('error', (e) => {
        clearTimeout(deadline);
        if (!settled) reject(e);
      });
      r.end(req.body);
    });
}

/**
 * What a failed attempt records: a reason in general words, never an address or the text of
 * whatever answered (the deliveries API shows it to the tenant).
 */
export function failureReason(e: unknown): string {
  if (e instanceof EgressRefused) return e.message;
  if (e instanceof DeadlineExceeded) return e.message;
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ECONNREFUSED': return 'no answer: the connection was refused';
    case 'ECONNRESET': case 'EPIPE': return 'no answer: the connection was closed';
    case 'ENOTFOUND': case 'EAI_AGAIN': case 'EAI_NONAME': case 'ENODATA': return 'no answer: the name does not resolve';
    case 'ETIMEDOUT': case 'ENETUNREACH': case 'EHOSTUNREACH': return 'no answer: the address is unreachable';
    case 'HPE_INVALID_CONSTANT': case 'HPE_INVALID_STATUS': return 'no answer: the answer is not HTTP';
  }
  if (typeof code === 'string' && (code.startsWith('ERR_TLS') || code.startsWith('CERT_') || code.includes('CERT') || code.startsWith('ERR_SSL'))) return 'no answer: the TLS handshake failed';
  return 'no answer: the request failed';
}
