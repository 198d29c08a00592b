/**
 * `agentpay logs tail`: follows the request log of a gateway on this machine,
 * DATA_DIR/logs/requests.jsonl (one JSON entry per request, written by every gateway the
 * CLI runs: `agentpay dev`, `agentpay gateway start`), printing the entries that match
 * the filters. Reading the file, not an API route, keeps it to the people who can read
 * the data dir and costs the gateway nothing; a fleet ships each instance's stderr (JSON)
 * to its log system instead (docs/cli.md). The file is polled: a rename at rotation is
 * followed to the new file once the old one is read to its end.
 */
import { closeSync, existsSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { RequestLogEntry } from '../gateway/request-log.js';
import { requestLogPath } from '../gateway/request-log.js';
import { usageError } from './errors/index.js';

export interface LogFilters {
  /** each `4xx`-style class or exact status; an entry matches any one */
  status?: string[];
  /** the path (query left out) starts with this */
  path?: string;
  /** error codes, any one */
  code?: string[];
  method?: string;
}

interface StatusRule {
  min: number;
  max: number;
}

/** `--status 4xx,500` as ranges; a malformed value names the flag and the accepted forms. */
export function parseStatusFilter(values: readonly string[]): StatusRule[] {
  return values
    .flatMap((v) => v.split(','))
    .map((raw) => raw.trim())
    .filter(Boolean)
    .map((v) => {
      const m = /^([1-5])(xx|\d\d)$/i.exec(v);
      if (!m) throw usageError(`--status: ${JSON.stringify(v)} is not a status; give a class like 4xx or an exact status like 404 (several: --status 4xx,500)`, undefined, { flag: '--status' });
      if (m[2]!.toLowerCase() === 'xx') return { min: Number(m[1]) * 100, max: Number(m[1]) * 100 + 99 };
      return { min: Number(v), max: Number(v) };
    });
}

/** A predicate for entries, from the filters (already checked). */
export function entryFilter(f: LogFilters): (e: RequestLogEntry) => boolean {
  const status = f.status?.length ? parseStatusFilter(f.status) : undefined;
  const codes = f.code?.length ? new Set(f.code.flatMap((c) => c.split(',')).map((c) => c.trim().toUpperCase())) : undefined;
  const method = f.method?.toUpperCase();
  return (e) =>
    (!status || status.some((r) => e.status >= r.min && e.status <= r.max)) &&
    (!f.path || e.url.split('?')[0]!.startsWith(f.path)) &&
    (!codes || (e.code !== undefined && codes.has(e.code))) &&
    (!method || e.method === method);
}

export interface FollowOptions {
  dataDir: string;
  filters: LogFilters;
  /** print the entries already in the file first (default: only new ones) */
  fromStart?: boolean;
  intervalMs?: number;
  /** stop after this many matching entries */
  count?: number | undefined;
  timeoutMs?: number | undefined;
  onEntry(e: RequestLogEntry): void;
  /**
   * Called once the starting point is fixed (the file opened at its end, or found missing): a request
   * made after this is followed. Say "following" here, not before, or a request made between the
   * two could fall before the starting point.
   */
  onFollowing?(): void;
  signal?: AbortSignal;
}

export type FollowEnd = 'count' | 'timeout' | 'stopped';

/** Reads what `path` gained since `pos`, from the open `fd`. */
function readFrom(fd: number, pos: number): { text: string; pos: number } {
  const size = fstatSync(fd).size;
  if (size <= pos) return { text: '', pos };
  const buf = Buffer.alloc(size - pos);
  const n = readSync(fd, buf, 0, buf.length, pos);
  return { text: buf.subarray(0, n).toString('utf8'), pos: pos + n };
}

export async function followRequestLog(opts: FollowOptions): Promise<{ end: FollowEnd; printed: number }> {
  const path = requestLogPath(resolve(opts.dataDir));
  const match = entryFilter(opts.filters);
  const interval = opts.intervalMs ?? 250;
  const deadline = opts.timeoutMs === undefined ? undefined : Date.now() + opts.timeoutMs;
  let fd: number | undefined;
  let ino = -1;
  let pos = 0;
  let rest = '';
  let printed = 0;
  let first = true;

  const open = (fromEnd: boolean) => {
    if (!existsSync(path)) return;
    try {
      fd = openSync(path, 'r');
    } catch {
      return; // rotated away between the check and the open: next poll
    }
    const st = fstatSync(fd);
    ino = st.ino;
    pos = fromEnd ? st.size : 0;
    rest = '';
  };
  /** hands out complete lines; false once --count is reached */
  const take = (text: string): boolean => {
    const lines = (rest + text).split('\n');
    rest = lines.pop()!;
    for (const line of lines) {
      if (!line) continue;
      let e: RequestLogEntry;
      try {
        e = JSON.parse(line) as RequestLogEntry;
      } catch {
        continue; // a line cut by a crash
      }
      if (!match(e)) continue;
      opts.onEntry(e);
      printed++;
      if (opts.count !== undefined && printed >= opts.count) return false;
    }
    return true;
  };

  try {
    for (;;) {
      if (opts.signal?.aborted) return { end: 'stopped', printed };
      if (fd === undefined) {
        // the first open starts at the end unless asked; a file made later is read from its start
        open(first && !opts.fromStart);
        if (first) opts.onFollowing?.();
        first = false;
      }
      if (fd !== undefined) {
        const got = readFrom(fd, pos);
        pos = got.pos;
        if (!take(got.text)) return { end: 'count', printed };
        // rotated (a new file under the name) or truncated: the old one is read to its end above
        let now: { ino: number; size: number } | undefined;
        try {
          now = statSync(path);
        } catch {
          now = undefined;
        }
        if (!now || now.ino !== ino || now.size < pos) {
          closeSync(fd);
          fd = undefined;
          if (now) {
            open(false);
            continue;
          }
        }
      }
      if (deadline !== undefined && Date.now() >= deadline) return { end: 'timeout', printed };
      await sleep(deadline === undefined ? interval : Math.min(interval, Math.max(0, deadline - Date.now())), opts.signal);
    }
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((res) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      res();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
