/**
 * Tests that run the `agentpay` binary need dist/ (and the SDK's packages/sdk/dist) built from the current sources.
 * CI builds (strictly) before testing; this makes a plain `npm test` after an edit just
 * as true. tsc emits even when it reports type errors, so those are shown, not fatal
 * here: `npm run build` is where they fail.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** set once this run has built: the projects that list this file (suite, postgres) share one main process */
const BUILT = Symbol.for('agentpay.test.built');

export default function setup(): void {
  const g = globalThis as { [BUILT]?: boolean };
  if (g[BUILT]) return; // a second project of the same run: built already (a second build cost 9 s more CPU, measured)
  g[BUILT] = true;
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  // the SDK package first: the CLI's dist/ imports it by name, from packages/sdk/dist
  for (const project of ['packages/sdk/tsconfig.json', 'tsconfig.build.json']) {
    const res = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, project)], { cwd: root, encoding: 'utf8' });
    if (res.status !== 0) process.stderr.write(`[global-setup] tsc -p ${project} reported problems (output was still emitted):\n${res.stdout}${res.stderr}\n`);
  }
  // the command manifest, written once here rather than by the first of many CLI runs at once
  const manifest = spawnSync(process.execPath, [join(root, 'bin/run.js'), '--version'], { cwd: root, encoding: 'utf8' });
  if (manifest.status !== 0) process.stderr.write(`[global-setup] agentpay --version failed:\n${manifest.stdout}${manifest.stderr}\n`);
}
