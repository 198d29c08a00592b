/**
 * Running the built `agentpay` binary (dist/ is compiled by the global setup) as a
 * child process, the way people and scripts run it: stdin not a terminal, stdout
 * piped, a private AGENTPAY_CONFIG_DIR, and no AGENTPAY_* variables from outside.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import { databaseOfDataDir } from '../helpers/pg.js';
import { checkStoreReach } from '../helpers/reach-check.js';

export const BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url));

const made: string[] = [];
export function tempDir(prefix = 'agentpay-cli-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
/** Removes every directory tempDir() made in this test file; call it from afterAll. */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export interface CliOptions {
  configDir: string;
  env?: Record<string, string>;
  cwd?: string;
  /** text on stdin */
  input?: string;
}

export interface CliResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

function cleanEnv(configDir: string, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('AGENTPAY_')) env[k] = v;
  // production: oclif skips looking for a TypeScript loader and runs dist/ as users do
  return { ...env, NODE_ENV: 'production', AGENTPAY_CONFIG_DIR: configDir, ...extra };
}

/**
 * On the `postgres` project (AGENTPAY_TEST_BACKEND=postgres), a command that opens a data dir's
 * store (`dev`, `gateway start`, `gateway operator-key`) gets AGENTPAY_DATABASE_URL: the database
 * of its data dir (test/helpers/pg.ts databaseOfDataDir: the same each time the data dir is served
 * again, in process or by the binary). A test that names a database itself (--database,
 * AGENTPAY_DATABASE_URL) keeps it.
 */
export async function backendEnv(args: string[], opts: CliOptions): Promise<Record<string, string>> {
  const opensStore = args[0] === 'dev' || (args[0] === 'gateway' && (args[1] === 'start' || args[1] === 'operator-key'));
  if (opensStore) checkStoreReach(`agentpay ${args.slice(0, args[0] === 'gateway' ? 2 : 1).join(' ')}`);
  if (process.env.AGENTPAY_TEST_BACKEND !== 'postgres') return {};
  if (!opensStore || args.some((a) => a === '--database' || a.startsWith('--database=')) || opts.env?.AGENTPAY_DATABASE_URL !== undefined) return {};
  if (args.includes('--help') || args.includes('-h')) return {};
  const cwd = opts.cwd ?? opts.configDir;
  const at = args.indexOf('--data-dir');
  const given = at >= 0 ? args[at + 1] : args.find((a) => a.startsWith('--data-dir='))?.slice('--data-dir='.length) ?? opts.env?.AGENTPAY_DATA_DIR;
  const dataDir = resolve(cwd, given ?? '.agentpay');
  return { AGENTPAY_DATABASE_URL: (await databaseOfDataDir(dataDir)).url };
}

export async function cli(args: string[], opts: CliOptions): Promise<CliResult> {
  const r = await execa(process.execPath, [BIN, ...args], {
    env: cleanEnv(opts.configDir, { ...opts.env, ...(await backendEnv(args, opts)) }),
    extendEnv: false,
    cwd: opts.cwd ?? opts.configDir,
    reject: false,
    ...(opts.input !== undefined ? { input: opts.input } : { stdin: 'ignore' as const }),
    timeout: 60_000,
  });
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}

/** Parses stdout as JSON, failing with the whole output when it is not. */
export function json<T = any>(r: CliResult): T {
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    throw new Error(`stdout is not JSON (exit ${r.exitCode}):\n${r.stdout}\nstderr:\n${r.stderr}`);
  }
}

/** The ready line of `agentpay dev|gateway start --json`, as the runner prints it. */
export type { ReadyInfo as ReadyLine } from '../../src/cli/gateway-runner.js';
import type { ReadyInfo as ReadyLine } from '../../src/cli/gateway-runner.js';

export interface GatewayProcess {
  ready: ReadyLine;
  pid: number;
  /** SIGTERM to this process only; resolves to its exit code and full stdout */
  stop(): Promise<{ exitCode: number | undefined; stdout: string; stderr: string }>;
}

/** Starts `agentpay <args>` (dev or gateway start with --json) and waits for its ready line. */
export async function startGatewayProcess(args: string[], opts: CliOptions): Promise<GatewayProcess> {
  const proc: ResultPromise = execa(process.execPath, [BIN, ...args], {
    env: cleanEnv(opts.configDir, { ...opts.env, ...(await backendEnv(args, opts)) }),
    extendEnv: false,
    cwd: opts.cwd ?? opts.configDir,
    reject: false,
    stdin: 'ignore',
  });
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const firstLine = new Promise<string>((res, rej) => {
    const rl = createInterface({ input: proc.stdout! });
    rl.once('line', (line) => {
      rl.close();
      res(line);
    });
    void proc.then((r) => rej(new Error(`agentpay ${args.join(' ')} exited ${r.exitCode} before it was ready:\n${stderr}`)));
  });
  const line = await firstLine;
  return {
    ready: JSON.parse(line) as ReadyLine,
    pid: proc.pid!,
    async stop() {
      proc.kill('SIGTERM');
      const r = await proc;
      return { exitCode: r.exitCode, stdout, stderr };
    },
  };
}

/** AGENTPAY_* variables that point the CLI at a test gateway (its URL and CA), with a key if given. */
export function gatewayEnv(t: { baseUrl: string; dataDir: string }, apiKey?: string): Record<string, string> {
  return { AGENTPAY_GATEWAY_URL: t.baseUrl, AGENTPAY_CA: join(t.dataDir, 'tls', 'ca.pem'), ...(apiKey ? { AGENTPAY_API_KEY: apiKey } : {}) };
}

/** What a gatewayProxy does with one request. */
export type ProxyRoute =
  /** pass it on and back */
  | 'forward'
  /** pass it on, wait for the gateway's answer, then cut the connection: done, never heard of */
  | 'drop-reply'
  /** answer it here, without the gateway */
  | { status: number; body: unknown };

/** A plain-HTTP proxy on 127.0.0.1 to a test gateway (HTTPS, its CA), `route` deciding per request. */
export async function gatewayProxy(
  t: { baseUrl: string; ca: string },
  route: (req: http.IncomingMessage) => ProxyRoute,
): Promise<{ url: string; close(): Promise<void> }> {
  const target = new URL(t.baseUrl);
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const how = route(req);
      if (typeof how === 'object') {
        res.writeHead(how.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(how.body));
        return;
      }
      const up = https.request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: { ...req.headers, host: target.host }, ca: t.ca }, (answer) => {
        const body: Buffer[] = [];
        answer.on('data', (c: Buffer) => body.push(c));
        answer.on('end', () => {
          if (how === 'drop-reply') return req.socket.destroy();
          res.writeHead(answer.statusCode!, answer.headers);
          res.end(Buffer.concat(body));
        });
      });
      up.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

export interface RunningCli {
  pid: number;
  /** what it wrote so far */
  stdout(): string;
  stderr(): string;
  /** resolves once `stream` holds `text`; fails after `ms`, or if the process exits first */
  waitFor(stream: 'stdout' | 'stderr', text: string, ms?: number): Promise<void>;
  /** its end: exit code and everything it wrote */
  done: Promise<CliResult>;
  /** sends `signal` to this process only and waits for its end */
  stop(signal?: NodeJS.Signals): Promise<CliResult>;
}

/** Starts `agentpay <args>` without waiting for it: for commands that run until stopped (events tail). */
export function spawnCli(args: string[], opts: CliOptions): RunningCli {
  const proc = execa(process.execPath, [BIN, ...args], { env: cleanEnv(opts.configDir, opts.env), extendEnv: false, cwd: opts.cwd ?? opts.configDir, reject: false, stdin: 'ignore' });
  const out = { stdout: '', stderr: '' };
  proc.stdout!.on('data', (d: Buffer) => (out.stdout += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out.stderr += d.toString()));
  let exited = false;
  const done: Promise<CliResult> = proc.then((r) => {
    exited = true;
    return { exitCode: r.exitCode ?? -1, stdout: out.stdout, stderr: out.stderr };
  });
  return {
    pid: proc.pid!,
    stdout: () => out.stdout,
    stderr: () => out.stderr,
    // a limit only for a process that never says it: a node start under a loaded 2-core machine took over 20 s once in CI
    async waitFor(stream, text, ms = 60_000) {
      const end = Date.now() + ms;
      while (!out[stream].includes(text)) {
        if (exited) throw new Error(`agentpay ${args.join(' ')} exited before its ${stream} held ${JSON.stringify(text)}:\nstdout:\n${out.stdout}\nstderr:\n${out.stderr}`);
        if (Date.now() > end) throw new Error(`agentpay ${args.join(' ')}: no ${JSON.stringify(text)} on ${stream} within ${ms} ms:\nstdout:\n${out.stdout}\nstderr:\n${out.stderr}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    done,
    async stop(signal = 'SIGINT') {
      proc.kill(signal);
      return done;
    },
  };
}
