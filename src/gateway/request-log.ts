/**
 * One log line per request, written when the response has gone out: time, method, URL
 * (query values redacted), status, latency, the API key's id and the error code. fastify's
 * own two lines per request (incoming, completed) are turned off in app.ts. The same entry
 * can also go to a `RequestLogSink`: DATA_DIR/logs/requests.jsonl for `agentpay logs tail`
 * (`RequestLogFile` below). No header, body or key is ever part of an entry.
 */
import { renameSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import pino from 'pino';
import type { Clock } from '../core/clock.js';
import { ensurePrivateDir } from '../core/files.js';

/** What one request's line says (the JSON of requests.jsonl; the pino line has the same fields). */
export interface RequestLogEntry {
  /** ISO time the response was sent */
  time: string;
  reqId: string;
  method: string;
  /** the path with only the names of query parameters (`redactUrl`) */
  url: string;
  status: number;
  /** milliseconds from the request's arrival to the end of the response, 0.1 ms precision */
  ms: number;
  /** the id (not the key) of the API key that authenticated it, if one did */
  keyId?: string;
  /** the `error.code` of an error answer */
  code?: string;
  ip: string;
}

export interface RequestLogSink {
  write(entry: RequestLogEntry): void;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** the error code of this request's answer, read in onSend */
    loggedErrorCode: string | undefined;
  }
}

/** The `error.code` of an error body, if it is the envelope. Only error answers are read. */
function errorCodeOf(payload: unknown): string | undefined {
  if (typeof payload !== 'string' || !payload.startsWith('{')) return undefined;
  try {
    const code = (JSON.parse(payload) as { error?: { code?: unknown } }).error?.code;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}

export interface RequestLogOptions {
  clock: Clock;
  redactUrl: (url: string) => string;
  sink?: RequestLogSink | undefined;
}

export default fp(async function requestLog(app: FastifyInstance, opts: RequestLogOptions) {
  app.decorateRequest('loggedErrorCode', undefined);
  // nothing to do per request when neither the log nor a sink takes the line (tests, benchmarks)
  const wanted = (request: FastifyRequest) => opts.sink !== undefined || ((request.log as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled?.('info') ?? false);
  app.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode >= 400 && wanted(request)) request.loggedErrorCode = errorCodeOf(payload);
    return payload;
  });
  app.addHook('onResponse', async (request: FastifyRequest, reply) => {
    if (!wanted(request)) return;
    const p = request.principalOrNull;
    const entry: RequestLogEntry = {
      time: new Date(opts.clock.now()).toISOString(),
      reqId: request.id,
      method: request.method,
      url: opts.redactUrl(request.url),
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 10) / 10,
      ...(p ? { keyId: p.keyId } : {}),
      ...(request.loggedErrorCode ? { code: request.loggedErrorCode } : {}),
      ip: request.ip,
    };
    // pino stamps its own time and reqId (the request's child logger)
    const { time: _time, reqId: _reqId, ...fields } = entry;
    request.log.info(fields, 'request');
    opts.sink?.write(entry);
  });
});

export const requestLogPath = (dataDir: string) => join(dataDir, 'logs', 'requests.jsonl');
/** the file the log is renamed to when it reaches its size (one older file is kept) */
export const rotatedLogPath = (path: string) => `${path}.1`;

/**
 * DATA_DIR/logs/requests.jsonl: one JSON entry per line, one small append per request once
 * the response is out (a write to the page cache, no fsync: a crash may lose the last lines,
 * which is fine for a log). At `maxBytes` the file is renamed to requests.jsonl.1
 * (replacing the previous one) and a new one is started, so the log takes at most twice
 * `maxBytes` on disk. Mode 0600, in a 0700 directory, although no entry holds a secret.
 */
export class RequestLogFile implements RequestLogSink {
  private readonly dest: ReturnType<typeof pino.destination>;
  private size: number;
  private closed = false;

  constructor(readonly path: string, private readonly maxBytes = 10 * 1024 * 1024) {
    ensurePrivateDir(dirname(path));
    this.size = sizeOf(path);
    this.dest = pino.destination({ dest: path, sync: true, mode: 0o600, append: true });
  }

  write(entry: RequestLogEntry): void {
    if (this.closed) return;
    const line = JSON.stringify(entry) + '\n';
    const bytes = Buffer.byteLength(line);
    if (this.size > 0 && this.size + bytes > this.maxBytes) {
      try {
        renameSync(this.path, rotatedLogPath(this.path));
        this.dest.reopen();
        this.size = 0;
      } catch {
        // could not rotate (the file was removed by hand?): keep appending where we are
      }
    }
    this.dest.write(line);
    this.size += bytes;
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    return new Promise((res) => {
      this.dest.once('close', () => res());
      this.dest.once('error', () => res());
      this.dest.end();
    });
  }
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}
