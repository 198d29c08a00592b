#!/usr/bin/env node
/**
 * `npm install`'s prepare step: build dist/ unless it is already newer than every input.
 * npx runs prepare again when it links this checkout into its cache on the first
 * `npx agentpay …` (silently, 15 to 30 s on a small machine); with dist/ fresh that is
 * now a stat of the sources. tsc itself is incremental (dist/.tsbuildinfo), so a real
 * rebuild after a pull compiles only what changed. The web dashboard (dist/dashboard, built by
 * vite from dashboard/) is rebuilt the same way: only when it is missing or older than its sources.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const stamp = join(root, 'dist', '.tsbuildinfo');
const INPUTS = ['src', 'commands', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json', 'packages/sdk/src', 'packages/sdk/package.json', 'packages/sdk/tsconfig.json'];

/** The newest modification time under a file or directory (0 when it does not exist). */
function newest(path) {
  let st;
  try {
    st = statSync(path);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return st.mtimeMs;
  let max = st.mtimeMs;
  for (const name of readdirSync(path)) max = Math.max(max, newest(join(path, name)));
  return max;
}

buildDashboard();

const built = newest(stamp);
if (built > 0 && INPUTS.every((p) => newest(join(root, p)) <= built)) process.exit(0);

/** dist/dashboard from dashboard/, unless it is newer than every input (vite is a dev dependency: absent, it is skipped). */
function buildDashboard() {
  const index = join(root, 'dist', 'dashboard', 'index.html');
  const inputs = ['dashboard', 'packages/sdk/src', 'src/core', 'package-lock.json'];
  const builtAt = newest(index);
  if (builtAt > 0 && inputs.every((p) => newest(join(root, p)) <= builtAt)) return;
  const vite = join(root, 'node_modules', 'vite', 'bin', 'vite.js');
  if (newest(vite) === 0) return;
  const r = spawnSync(process.execPath, [vite, 'build', '--config', join(root, 'dashboard', 'vite.config.ts')], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
// the SDK package first: the CLI's dist/ imports it by name (node_modules/agentpay-sdk -> packages/sdk)
for (const project of ['packages/sdk/tsconfig.json', 'tsconfig.build.json']) {
  const r = spawnSync(process.execPath, [tsc, '-p', join(root, project)], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
const now = new Date();
utimesSync(stamp, now, now); // tsc leaves the stamp alone when nothing changed but a timestamp
