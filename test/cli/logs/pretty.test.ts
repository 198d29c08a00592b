/**
 * The readable log: what a person sees on a terminal for each request and each other
 * message, with and without colours, and when colours are used at all.
 */
import { describe, expect, it } from 'vitest';
import { colorsFor, prettyDestination, prettyLine, requestLine, usePretty } from '../../../src/cli/log-pretty.js';

const ESC = '\u001b[';
const at = new Date(2026, 10, 27, 14, 2, 11, 42).getTime(); // local time, as the line shows it

describe('requestLine', () => {
  it('shows time, method, path, status, latency, key id and error code on one line', () => {
    const line = requestLine({ time: at, method: 'POST', url: '/v1/x402/authorize', status: 402, ms: 12.34, keyId: 'key_abc', code: 'INSUFFICIENT_FUNDS' });
    expect(line).toBe('14:02:11.042  POST   /v1/x402/authorize  402  12.3 ms  key_abc  INSUFFICIENT_FUNDS');
    expect(line).not.toContain('\n');
  });

  it('shows "-" for a request without a key and no code for a success; reads an ISO time as requests.jsonl has it', () => {
    const line = requestLine({ time: new Date(at).toISOString(), method: 'GET', url: '/health', status: 200, ms: 0.5 });
    expect(line).toBe('14:02:11.042  GET    /health  200  0.5 ms  -');
  });

  it('colours the status by class only when asked', () => {
    const ok = requestLine({ time: at, method: 'GET', url: '/health', status: 200, ms: 1 }, true);
    const client = requestLine({ time: at, method: 'GET', url: '/x', status: 404, ms: 1, code: 'NOT_FOUND' }, true);
    const server = requestLine({ time: at, method: 'GET', url: '/x', status: 500, ms: 1, code: 'INTERNAL' }, true);
    expect(ok).toContain(`${ESC}32m200`);
    expect(client).toContain(`${ESC}33m404`);
    expect(client).toContain(`${ESC}33mNOT_FOUND`);
    expect(server).toContain(`${ESC}31m500`);
    expect(requestLine({ time: at, method: 'GET', url: '/x', status: 500, ms: 1 }, false)).not.toContain(ESC);
  });
});

describe('prettyLine', () => {
  it('renders a pino request line as the request line', () => {
    const pinoLine = { level: 30, time: at, pid: 1, hostname: 'h', reqId: 'req_1', method: 'GET', url: '/v1/wallets', status: 200, ms: 3, keyId: 'key_1', ip: '127.0.0.1', msg: 'request' };
    expect(prettyLine(pinoLine)).toBe(requestLine({ time: at, method: 'GET', url: '/v1/wallets', status: 200, ms: 3, keyId: 'key_1' }));
  });

  it('renders any other message with its level and fields, strings quoted when they hold spaces', () => {
    const line = prettyLine({ level: 40, time: at, pid: 1, msg: 'the signing keys directory was open', dir: '/tmp/a b', previousMode: '0755' });
    expect(line).toBe('14:02:11.042  WARN   the signing keys directory was open  dir="/tmp/a b" previousMode=0755');
  });

  it("shows an error's message inline and its stack indented below", () => {
    const line = prettyLine({ level: 50, time: at, msg: 'rail job failed', err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at x (y.js:1:1)' } });
    const [first, ...rest] = line.split('\n');
    expect(first).toBe('14:02:11.042  ERROR  rail job failed  err=boom');
    expect(rest).toEqual(['    Error: boom', '        at x (y.js:1:1)']);
  });
});

describe('prettyDestination', () => {
  it('turns each JSON line pino writes into a readable line and passes anything else through', () => {
    const out: string[] = [];
    const dest = prettyDestination({ write: (s: string) => out.push(s) }, false);
    dest.write(JSON.stringify({ level: 30, time: at, msg: 'gateway ready', mode: 'sandbox' }) + '\n');
    dest.write('not json\n');
    expect(out.join('')).toBe('14:02:11.042  INFO   gateway ready  mode=sandbox\nnot json\n');
  });
});

describe('when the log is pretty and coloured', () => {
  it('auto is pretty on a terminal only; pretty and json force it', () => {
    expect(usePretty('auto', { isTTY: true })).toBe(true);
    expect(usePretty('auto', { isTTY: false })).toBe(false);
    expect(usePretty('auto', {})).toBe(false);
    expect(usePretty('pretty', { isTTY: false })).toBe(true);
    expect(usePretty('json', { isTTY: true })).toBe(false);
  });

  it('colours a terminal that has colours, never a pipe; NO_COLOR and FORCE_COLOR decide when set', () => {
    const tty = { isTTY: true, hasColors: () => true };
    expect(colorsFor(tty, {})).toBe(true);
    expect(colorsFor({ isTTY: true, hasColors: () => false }, {})).toBe(false);
    expect(colorsFor({ isTTY: false }, {})).toBe(false);
    expect(colorsFor(tty, { NO_COLOR: '1' })).toBe(false);
    expect(colorsFor({ isTTY: false }, { FORCE_COLOR: '1' })).toBe(true);
    expect(colorsFor(tty, { FORCE_COLOR: '0' })).toBe(false);
  });
});
