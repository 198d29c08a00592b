/**
 * The one place that turns errors into responses: AppError codes map to statuses via
 * `httpStatusFor`; schema failures become VALIDATION_FAILED naming the field; anything
 * unexpected (an AppError('INTERNAL') included) is logged with an errorId and answered
 * `500 internal error`. Requests node cannot parse, and requests that arrive while the
 * gateway is closing, are answered in the same envelope.
 */
import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { IncomingMessage } from 'node:http';
import { AppError, displaySafe, httpStatusFor } from '../../core/errors.js';
import { randomId } from '../../core/ids.js';

interface AjvError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
  parentSchema?: Record<string, unknown>;
}

function fieldOf(e: AjvError): string {
  const path = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
  if (e.keyword === 'required') return path ? `${path}.${String(e.params.missingProperty)}` : String(e.params.missingProperty);
  if (e.keyword === 'additionalProperties') return path ? `${path}.${String(e.params.additionalProperty)}` : String(e.params.additionalProperty);
  return path || '(body)';
}

function describe(e: AjvError): string {
  const s = e.parentSchema ?? {};
  if (s['x-amount']) {
    return e.keyword === 'type'
      ? 'must be a string of integer minor units, e.g. "100"; JSON numbers are refused, never rounded'
      : 'must be a string of integer minor units (digits only, no sign, decimal point or leading zero)';
  }
  switch (e.keyword) {
    case 'required':
      return 'is required';
    case 'enum':
      return `must be one of ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'additionalProperties':
      return 'is not a field of this request: remove it, or check its spelling';
    default:
      return e.message ?? 'is invalid';
  }
}

export function validationToAppError(err: FastifyError & { validation?: AjvError[]; validationContext?: string }): AppError {
  const errors = (err.validation ?? []).filter((e) => e.keyword !== 'anyOf' && !(e.keyword === 'type' && e.params.type === 'null'));
  const first = errors[0] ?? err.validation?.[0];
  if (!first) return new AppError('VALIDATION_FAILED', err.message, {});
  const field = first.keyword === 'type' && !first.instancePath && err.validationContext === 'body' ? 'body' : fieldOf(first);
  const where = err.validationContext && err.validationContext !== 'body' ? ` (${err.validationContext})` : '';
  return new AppError('VALIDATION_FAILED', `${field}${where}: ${describe(first)}`, {
    field,
    location: err.validationContext ?? 'body',
    problems: errors.map((e) => ({ field: fieldOf(e), problem: describe(e) })),
  });
}

/** The largest request body the gateway reads (buildApp's bodyLimit); the 413 message states it. */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/** Fastify's own client errors, in our envelope. */
function fastifyClientError(err: FastifyError): AppError | undefined {
  switch (err.code) {
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('VALIDATION_FAILED', "body: is empty but content-type is application/json; send a JSON body or drop the header", { field: 'body' });
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('VALIDATION_FAILED', `body: is not valid JSON (${err.message})`, { field: 'body' });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('VALIDATION_FAILED', 'content-type: bodies must be application/json', { field: 'content-type', location: 'headers' });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('PAYLOAD_TOO_LARGE', `body: is larger than the ${BODY_LIMIT_BYTES / 1024 / 1024} MiB limit; send a smaller body (split a batch into several requests)`, { field: 'body', limitBytes: BODY_LIMIT_BYTES });
    default:
      break;
  }
  if (err instanceof SyntaxError) return new AppError('VALIDATION_FAILED', `body: is not valid JSON (${err.message})`, { field: 'body' });
  return undefined;
}

/** The status and body an error is answered with (a route's reply, or one result of a batch). */
export function errorResponse(err: unknown, log: { error(obj: object, msg: string): void }): { status: number; body: Record<string, unknown> } {
  const e = toAppError(err);
  // an AppError('INTERNAL') is a broken invariant too: its message is for the log, not the client
  if (e && e.code !== 'INTERNAL') return { status: httpStatusFor(e.code), body: { ...e.extra, error: envelope(e.code, e.message, detailsOf(e)) } };
  const errorId = randomId('error');
  log.error({ err, errorId }, 'unexpected error');
  return { status: 500, body: { error: envelope('INTERNAL', 'internal error', { errorId }), errorId } };
}

/**
 * The `error` member of every error body, the one place it is built: message and details are
 * made display-safe (`displaySafe`), since they echo what clients sent (ids, field names, URLs)
 * and end up in terminals and logs.
 */
export function envelope(code: string, message: string, details: Record<string, unknown>): { code: string; message: string; details: Record<string, unknown> } {
  return { code, message: displaySafe(message), details: safeValue(details, 0) as Record<string, unknown> };
}

function safeValue(v: unknown, depth: number): unknown {
  if (typeof v === 'string') return displaySafe(v);
  if (depth > 8 || v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((x) => safeValue(x, depth + 1));
  if (Object.getPrototypeOf(v) !== Object.prototype) return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [displaySafe(k), safeValue(x, depth + 1)]));
}

/**
 * An error's details as sent. Every 400 VALIDATION_FAILED that names a field has the shape of
 * a schema failure, `{field, location, problems: [{field, problem}]}`, whichever layer refused:
 * the services name the field (the body's unless they say `location`), this completes the rest.
 */
function detailsOf(e: AppError): Record<string, unknown> {
  const { field } = e.details;
  if (e.code !== 'VALIDATION_FAILED' || typeof field !== 'string' || e.details.problems !== undefined) return e.details;
  const problem = e.message.startsWith(`${field}: `) ? e.message.slice(field.length + 2) : e.message;
  return { ...e.details, location: e.details.location ?? 'body', problems: [{ field, problem }] };
}

/** What an error means to a client, or undefined for an unexpected one (a bug: logged, answered 500). */
function toAppError(err: unknown): AppError | undefined {
  if (err instanceof AppError) return err;
  if (!err || typeof err !== 'object') return undefined;
  const fe = err as FastifyError;
  if ((fe as { validation?: unknown }).validation) return validationToAppError(fe);
  const client = fastifyClientError(fe);
  if (client) return client;
  if (fe.statusCode === 429) return new AppError('RATE_LIMITED', fe.message || 'too many requests; retry after the time in the retry-after header');
  return undefined;
}

export function sendError(reply: FastifyReply, e: AppError): FastifyReply {
  const { status, body } = errorResponse(e, reply.log);
  return reply.code(status).send(body);
}

/** What a client is told to wait before retrying a request refused while the gateway closes. */
export const CLOSING_RETRY_AFTER_SECONDS = 5;

export default fp(async function errors(app: FastifyInstance) {
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const { status, body } = errorResponse(err, request.log);
    // a domain's 429 (the per-address login backoff) says when to retry in its details; the header says it too
    const retryAfter = err instanceof AppError && status === 429 ? err.details.retryAfterSeconds : undefined;
    if (typeof retryAfter === 'number' && !reply.hasHeader('retry-after')) reply.header('retry-after', String(retryAfter));
    return reply.code(status).send(body);
  });

  // Closing (graceful shutdown): fastify's own 503 (return503OnClosing) has no envelope, so
  // buildApp turns it off and new requests are refused here, first of all hooks. Requests
  // already past this point run to the end; the server closes once they have.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (_request, reply) => {
    if (!closing) return;
    reply.header('retry-after', String(CLOSING_RETRY_AFTER_SECONDS));
    return sendError(
      reply,
      new AppError('SERVICE_UNAVAILABLE', `the gateway is shutting down; retry in ${CLOSING_RETRY_AFTER_SECONDS}s (once it or another instance is up again)`, {
        retryAfterSeconds: CLOSING_RETRY_AFTER_SECONDS,
      }),
    );
  });
});

/** A request node could not read as HTTP, as the error a client is told. */
function connectionErrorOf(err: ConnectionError): AppError {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new AppError('HEADERS_TOO_LARGE', `headers: are larger than the ${maxHeaderSize / 1024} KiB limit; send fewer or shorter headers`, {
        field: 'headers',
        limitBytes: maxHeaderSize,
      });
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError('REQUEST_TIMEOUT', 'the request was not received whole in time; send it again');
    default:
      return new AppError('VALIDATION_FAILED', `the request is not valid HTTP/1.1 (${err.message}); check the request line and the header names and values`, {
        reason: err.code,
      });
  }
}

/**
 * fastify's `clientErrorHandler`: a request node could not parse (400), with headers over the
 * limit (431) or not received in time (408), answered in the envelope where the socket can still
 * be written. fastify's default logs `err.rawPacket`, the raw bytes received (API keys, bodies);
 * this logs what went wrong and none of them.
 */
export function clientErrorHandler(this: FastifyInstance, err: ConnectionError, socket: Socket): void {
  // a reset connection has nobody to answer
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const e = connectionErrorOf(err);
  this.log.debug({ err: { type: err.name, code: err.code, message: err.message, bytesParsed: err.bytesParsed } }, 'unreadable request');
  writeRawError(socket, e, { head: refusedRequestIsHead(err) });
  // as node and fastify do: the connection cannot be read further
  socket.destroy(err);
}

/**
 * Whether the request node could not parse began `HEAD `: its answer then has no body, or a
 * client reading it would take the body for the next answer. The request is the bytes after the
 * last blank line before the point where parsing failed (a pipelined request before it ended there).
 */
function refusedRequestIsHead(err: ConnectionError): boolean {
  const raw = (err as { rawPacket?: unknown }).rawPacket;
  if (!Buffer.isBuffer(raw)) return false;
  const upTo = raw.subarray(0, Math.min(raw.length, typeof err.bytesParsed === 'number' ? err.bytesParsed + 1 : raw.length));
  const blank = upTo.lastIndexOf('\r\n\r\n');
  const start = blank < 0 ? 0 : blank + 4;
  return raw.subarray(start, start + 5).toString('latin1') === 'HEAD ';
}

/** Writes one error answer (no body to a HEAD request) on a socket fastify does not serve. */
function writeRawError(socket: Socket, e: AppError, opts: { head?: boolean } = {}): void {
  if (!socket.writable) return;
  const status = httpStatusFor(e.code);
  const body = JSON.stringify({ error: envelope(e.code, e.message, e.details) });
  socket.write(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${opts.head ? '' : body}`,
  );
}

/** The 403 of the refuse-only plain listener, in the envelope as all its answers are. */
export function insecureTransportError(protocol: string): AppError {
  return new AppError('INSECURE_TRANSPORT', 'plain HTTP is refused; use https://', { protocol });
}

/**
 * The refuse-only plain listener's 'clientError' (server.ts): a request node cannot parse is
 * refused there like every other, 403 INSECURE_TRANSPORT in the envelope, rather than with
 * node's empty 400. Nothing of the raw bytes is logged.
 */
export function plainClientErrorHandler(err: ConnectionError, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  writeRawError(socket, insecureTransportError('http'), { head: refusedRequestIsHead(err) });
  socket.end();
}

/*
 * Refusals before routing. fastify answers a URL its router cannot decode (FST_ERR_BAD_URL)
 * itself, outside every hook and outside the envelope; node answers a request without Host
 * (HTTP/1.1) with an empty 400 (the servers are made with requireHostHeader: false, server.ts).
 * `rewriteUrl` sees each request first: such a request is marked with its error and routed to
 * no route, so the not-found handler answers it, after the plain-HTTP check (an onRequest hook)
 * and counted by the rate limit (its preHandler), as every other request is.
 */
const refusedBeforeRouting = new WeakMap<IncomingMessage, AppError>();
/** Where a refused request is routed: a path no route serves. */
const REFUSED_PATH = '/.refused';

function refusalOf(req: IncomingMessage): AppError | undefined {
  const url = req.url ?? '';
  if (req.httpVersion === '1.1' && req.headers.host === undefined) {
    return new AppError('VALIDATION_FAILED', 'host: is required in HTTP/1.1 (headers); send a Host header naming the gateway', { field: 'host', location: 'headers' });
  }
  const end = url.search(/[?#]/);
  const path = end < 0 ? url : url.slice(0, end);
  let bad = false;
  try {
    decodeURI(path); // as fastify's router decodes it: it refuses what this cannot decode
  } catch {
    bad = true;
  }
  if (!bad && !path.startsWith('/') && /^https?:\/\//i.test(path) && !URL.canParse(path)) bad = true;
  if (bad) return badUrlError();
  return undefined;
}

function badUrlError(): AppError {
  return new AppError('VALIDATION_FAILED', 'url: is not a valid URL path (each % must start a %XX escape of UTF-8 bytes); percent-encode ids and path segments (encodeURIComponent)', {
    field: 'url',
    location: 'path',
  });
}

/** fastify's `rewriteUrl` (app.ts): marks and reroutes a request refused before routing. */
export function rewriteUrl(req: IncomingMessage): string {
  const refusal = refusalOf(req);
  if (!refusal) return req.url ?? '/';
  refusedBeforeRouting.set(req, refusal);
  return REFUSED_PATH;
}

/**
 * fastify's `frameworkErrors` (app.ts): what its router still refuses itself (a URL `rewriteUrl`
 * let through, a path parameter over `routerOptions.maxParamLength`), in the envelope and after
 * the plain-HTTP check. No hook runs for these; `rewriteUrl` and the parameter length, set above
 * the longest URL node reads, keep them from happening.
 */
export function frameworkErrors(err: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  // fastify builds this request without its trustProxy handling: the proxy's x-forwarded-proto is read here
  const encrypted = Boolean((request.raw.socket as { encrypted?: boolean }).encrypted);
  const forwarded = request.server.services?.config.trustProxy ? String(request.headers['x-forwarded-proto'] ?? '').split(',')[0]!.trim() : '';
  const protocol = encrypted || forwarded === 'https' ? 'https' : 'http';
  if (protocol !== 'https') return sendError(reply, insecureTransportError(protocol));
  if (err.code === 'FST_ERR_BAD_URL' || err.code === 'FST_ERR_MAX_PARAM_LENGTH') return sendError(reply, badUrlError());
  return sendError(reply, toAppError(err) ?? new AppError('VALIDATION_FAILED', 'the request could not be routed; check its method and URL', { field: 'url', location: 'path' }));
}

/** The answer to a request no route serves; set by the rate-limit plugin, which counts these too. */
export function notFoundHandler(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const refused = refusedBeforeRouting.get(request.raw);
  if (refused) return sendError(reply, refused);
  return sendError(reply, new AppError('NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0]}`, { method: request.method }));
}
