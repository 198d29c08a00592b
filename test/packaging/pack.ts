/**
 * Both packages packed by `npm pack` and installed from their tarballs in temp directories outside
 * this checkout, as a user gets them from the registry: what test/packaging/packed.test.ts and
 * test/packaging/docs.test.ts share. Each test file calls `packing(prefix)` once at its top level:
 * its own temp dir (removed after the file), its tarballs (packed in beforeAll), and the processes it
 * started (stopped after the file). Why the CLI installs with --ignore-scripts and gets this
 * checkout's better-sqlite3 binding: packed.test.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, expect } from 'vitest';

export const ROOT = realpathSync(fileURLToPath(new URL('../..', import.meta.url)));
export const NPM_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund'];
export const readJson = (p: string) => JSON.parse(readFileSync(p, 'utf8'));

export interface Packed {
  name: string;
  version: string;
  filename: string;
  files: { path: string }[];
}

/** Every file under dir (relative), following no symlinks. */
export function walk(dir: string, sub = ''): string[] {
  return readdirSync(join(dir, sub), { withFileTypes: true }).flatMap((e) => {
    const rel = sub ? `${sub}/${e.name}` : e.name;
    return e.isDirectory() ? walk(dir, rel) : [rel];
  });
}

export function bytesUnder(dir: string): number {
  return walk(dir).reduce((sum, f) => sum + lstatSync(join(dir, f)).size, 0);
}

/** A port that was free a moment ago. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** The installed package is a real directory from a tarball, not a link into this checkout. */
export function expectFromTarball(project: string, name: string): void {
  const at = join(project, 'node_modules', name);
  expect(lstatSync(at).isSymbolicLink(), `${name} is a link`).toBe(false);
  expect(realpathSync(at).startsWith(`${ROOT}/`), `${name} resolves into the checkout`).toBe(false);
  expect(readJson(join(project, 'package-lock.json')).packages[`node_modules/${name}`].resolved).toMatch(/^file:.*\.tgz$/);
}

/** This file's temp dir, tarballs and processes; registers its beforeAll (pack) and afterAll (stop, remove). */
export function packing(prefix: string) {
  const BASE = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  const PACKS = join(BASE, 'packs');
  const started: ChildProcess[] = [];
  const packed: Record<string, Packed & { tarball: string }> = {};

  /** The environment of a person's shell: no vitest NODE_ENV, no npm_* of the `npm test` running us, no AGENTPAY_* settings. */
  function userEnv(extra: Record<string, string> = {}): Record<string, string> {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) {
      if (v === undefined || k === 'NODE_ENV' || k === 'INIT_CWD' || k.startsWith('AGENTPAY_') || k.toLowerCase().startsWith('npm_') || k.startsWith('VITEST')) continue;
      env[k] = v;
    }
    return { ...env, AGENTPAY_CONFIG_DIR: join(BASE, 'config'), ...extra };
  }

  async function run(cmd: string, args: string[], cwd: string, timeoutMs: number, env: Record<string, string> = {}) {
    const r = await execa(cmd, args, { cwd, env: userEnv(env), extendEnv: false, reject: false, stdin: 'ignore', timeout: timeoutMs, all: true });
    return { exitCode: r.exitCode, stdout: String(r.stdout ?? ''), output: `$ ${cmd} ${args.join(' ')} in ${cwd} (exit ${r.exitCode}${r.timedOut ? ', timed out' : ''})\n${String(r.all ?? '')}` };
  }

  function newProject(name: string, pkg: Record<string, unknown> = {}): string {
    const dir = join(BASE, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', private: true, type: 'module', ...pkg }, null, 2));
    return dir;
  }

  /** The installed better-sqlite3 gets its native binding: this checkout's when the versions match, else compiled. */
  async function provideSqliteBinding(project: string): Promise<void> {
    const installed = join(project, 'node_modules/better-sqlite3');
    expect(existsSync(installed), 'better-sqlite3 (a dependency of agentpay-cli) is not installed').toBe(true);
    const ours = join(ROOT, 'node_modules/better-sqlite3');
    const binding = join(ours, 'build/Release/better_sqlite3.node');
    if (existsSync(binding) && readJson(join(ours, 'package.json')).version === readJson(join(installed, 'package.json')).version) {
      mkdirSync(join(installed, 'build/Release'), { recursive: true });
      copyFileSync(binding, join(installed, 'build/Release/better_sqlite3.node'));
      return;
    }
    const rebuilt = await run('npm', ['rebuild', 'better-sqlite3'], project, 600_000);
    expect(rebuilt.exitCode, rebuilt.output).toBe(0);
  }

  /** A process whose first stdout line is its ready line (node when `cmd` is not given). */
  function startNode(args: string[], cwd: string, env: Record<string, string> = {}, cmd: string = process.execPath) {
    const child = spawn(cmd, args, { cwd, env: userEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    started.push(child);
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr = (stderr + d).slice(-8000)));
    const firstLine = new Promise<string>((resolve, reject) => {
      const rl = createInterface({ input: child.stdout! });
      const timer = setTimeout(() => reject(new Error(`${args.join(' ')} printed nothing in 90 s; stderr:\n${stderr}`)), 90_000);
      rl.once('line', (line) => {
        clearTimeout(timer);
        resolve(line);
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`${args.join(' ')} exited (${code}) before it was ready; stderr:\n${stderr}`));
      });
    });
    // a caller that waits on something else (a port, say) never awaits the line; stopping such a process must not
    // leave a rejection unhandled (vitest fails the whole run on one). A caller that awaits it still gets the error.
    firstLine.catch(() => undefined);
    return { child, firstLine, stderr: () => stderr };
  }

  beforeAll(async () => {
    for (const built of ['dist/src/index.js', 'dist/commands/dev.js', 'packages/sdk/dist/index.js']) {
      expect(existsSync(join(ROOT, built)), `${built} is missing: build first (npm run build; test/global-setup.ts does it in npm test)`).toBe(true);
    }
    mkdirSync(PACKS);
    // the SDK from a copy of what it publishes (files, package.json) and its pack scripts
    const sdkCopy = join(BASE, 'sdk-package');
    mkdirSync(sdkCopy);
    for (const f of ['package.json', 'README.md', 'LICENSE', 'dist', 'scripts']) cpSync(join(ROOT, 'packages/sdk', f), join(sdkCopy, f), { recursive: true });
    const packs = await Promise.all([
      run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', PACKS], ROOT, 120_000),
      run('npm', ['pack', '--json', '--pack-destination', PACKS], sdkCopy, 120_000),
    ]);
    for (const r of packs) {
      expect(r.exitCode, r.output).toBe(0);
      for (const p of JSON.parse(r.stdout) as Packed[]) packed[p.name] = { ...p, tarball: join(PACKS, p.filename) };
    }
    expect(Object.keys(packed).sort()).toEqual(['agentpay-cli', 'agentpay-sdk']);
    // postpack put the source package.json back
    expect(readFileSync(join(sdkCopy, 'package.json'), 'utf8')).toBe(readFileSync(join(ROOT, 'packages/sdk/package.json'), 'utf8'));
  }, 180_000);

  afterAll(async () => {
    await Promise.all(started.map(stop));
    rmSync(BASE, { recursive: true, force: true });
  }, 300_000); // a project's node_modules, removed on a loaded machine

  return { BASE, packed, userEnv, run, newProject, provideSqliteBinding, startNode };
}
