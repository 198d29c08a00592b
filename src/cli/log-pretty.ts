/**
 * The gateway's log as a person reads it on a terminal: one line per request
 * (`14:02:11.042  POST /v1/x402/authorize  402  12.3 ms  key_…  INSUFFICIENT_FUNDS`) and one
 * line per other message (`14:02:10.001  INFO  gateway ready  baseUrl=…`), coloured when the
 * terminal supports it. It reads the JSON lines pino writes, so what is logged is decided in
 * one place and only its rendering differs; when piped, the JSON itself goes out.
 */
import type { RequestLogEntry } from '../gateway/request-log.js';

/** How the log is written: `auto` is pretty on a terminal, JSON otherwise. */
export const LOG_FORMATS = ['auto', 'pretty', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** Whether `format` means pretty lines on `stream` (stderr for the gateway's log). */
export function usePretty(format: LogFormat, stream: { isTTY?: boolean }): boolean {
  return format === 'pretty' || (format === 'auto' && stream.isTTY === true);
}

/**
 * Whether to colour what goes to `stream`: FORCE_COLOR (not 0) and NO_COLOR decide when set
 * (https://no-color.org), else a terminal that says it has colours.
 */
export function colorsFor(stream: { isTTY?: boolean; hasColors?: () => boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '') return env.FORCE_COLOR !== '0' && env.FORCE_COLOR !== 'false';
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  return stream.isTTY === true && (stream.hasColors?.() ?? false);
}

const ANSI = { dim: 2, bold: 1, red: 31, green: 32, yellow: 33, blue: 34, magenta: 35, cyan: 36, gray: 90 } as const;
type Style = keyof typeof ANSI;
const paint = (on: boolean, style: Style, text: string) => (on ? `\u001b[${ANSI[style]}m${text}\u001b[${style === 'bold' || style === 'dim' ? 22 : 39}m` : text);

const LEVELS: Record<number, [string, Style]> = {
  10: ['TRACE', 'gray'],
  20: ['DEBUG', 'blue'],
  30: ['INFO', 'green'],
  40: ['WARN', 'yellow'],
  50: ['ERROR', 'red'],
  60: ['FATAL', 'magenta'],
};

function clock(time: unknown): string {
  const d = new Date(typeof time === 'number' || typeof time === 'string' ? time : Date.now());
  if (Number.isNaN(d.getTime())) return String(time);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}

function statusStyle(status: number): Style {
  return status >= 500 ? 'red' : status >= 400 ? 'yellow' : status >= 300 ? 'cyan' : 'green';
}

/** One request, from a requests.jsonl entry or a pino `request` line (same fields). */
export function requestLine(e: Pick<RequestLogEntry, 'method' | 'url' | 'status' | 'ms'> & { time?: unknown; keyId?: string; code?: string }, color = false): string {
  const parts = [
    paint(color, 'dim', clock(e.time)),
    `${paint(color, 'bold', e.method.padEnd(6))} ${e.url}`,
    paint(color, statusStyle(e.status), String(e.status)),
    `${e.ms.toFixed(1)} ms`,
    e.keyId ? paint(color, 'dim', e.keyId) : paint(color, 'dim', '-'),
  ];
  if (e.code) parts.push(paint(color, statusStyle(e.status), e.code));
  return parts.join('  ');
}

/** pino's own fields, not shown as key=value */
const PINO_FIELDS = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'v']);

function value(v: unknown): string {
  if (typeof v === 'string') return /[\s"=]/.test(v) || v === '' ? JSON.stringify(v) : v;
  return JSON.stringify(v);
}

/** Any pino line (a parsed JSON object) as one or more readable lines. */
export function prettyLine(obj: Record<string, unknown>, color = false): string {
  if (obj.msg === 'request' && typeof obj.method === 'string' && typeof obj.url === 'string' && typeof obj.status === 'number' && typeof obj.ms === 'number') {
    return requestLine(obj as unknown as RequestLogEntry, color);
  }
  const [name, style] = LEVELS[obj.level as number] ?? [String(obj.level ?? 'LOG').toUpperCase(), 'gray' as Style];
  const head = `${paint(color, 'dim', clock(obj.time))}  ${paint(color, style, name.padEnd(5))}  ${typeof obj.msg === 'string' ? obj.msg : ''}`;
  const fields: string[] = [];
  let stack: string | undefined;
  for (const [k, v] of Object.entries(obj)) {
    if (PINO_FIELDS.has(k) || v === undefined) continue;
    if (k === 'err' && v && typeof v === 'object') {
      const err = v as { message?: string; stack?: string; code?: string; type?: string };
      fields.push(`err=${value(err.message ?? err.type ?? 'error')}`);
      if (err.code) fields.push(`code=${value(err.code)}`);
      stack = err.stack;
      continue;
    }
    fields.push(`${k}=${value(v)}`);
  }
  const line = fields.length ? `${head}  ${paint(color, 'dim', fields.join(' '))}` : head;
  if (!stack) return line;
  return `${line}\n${stack.split('\n').map((l) => `    ${paint(color, 'dim', l)}`).join('\n')}`;
}

/**
 * A pino destination that writes pretty lines to `out` instead of JSON: pino hands it whole
 * JSON lines (one or more per write); a line that is not JSON goes out as it is.
 */
export function prettyDestination(out: { write(s: string): unknown }, color: boolean): { write(chunk: string): void } {
  return {
    write(chunk: string) {
      let text = '';
      for (const raw of chunk.split('\n')) {
        if (!raw) continue;
        let obj: unknown;
        try {
          obj = JSON.parse(raw);
        } catch {
          text += raw + '\n';
          continue;
        }
        text += (obj && typeof obj === 'object' ? prettyLine(obj as Record<string, unknown>, color) : raw) + '\n';
      }
      if (text) out.write(text);
    },
  };
}
