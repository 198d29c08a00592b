/**
 * Tests that run the `agentpay` binary need dist/ built from the current sources.
 * CI builds before testing; this makes a plain `npm test` after an edit just as true.
 */
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit', cwd: root });
}
