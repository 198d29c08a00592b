#!/usr/bin/env node
/**
 * The package.json that is published: npm runs `prepack` (strip) before it packs this directory and
 * `postpack` (restore) after. The `agentpay-source` export condition names the TypeScript sources
 * for this repository's own tsc and vitest (tsconfig customConditions, vitest.config.ts); src/ is not
 * in the tarball, so the published package.json leaves the condition out. npm's `publishConfig` cannot
 * override `exports`, hence the rewrite in place and the restore.
 *
 *   node scripts/publish-manifest.mjs strip     package.json -> .package.json.prepack, then the stripped file
 *   node scripts/publish-manifest.mjs restore   .package.json.prepack -> package.json
 *
 * `strip` restores first when a backup is still there (a pack that died before its postpack), so the
 * backup is always the source file.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const pkgPath = fileURLToPath(new URL('../package.json', import.meta.url));
const backupPath = fileURLToPath(new URL('../.package.json.prepack', import.meta.url));
const SOURCE_CONDITION = 'agentpay-source';

function restore() {
  if (existsSync(backupPath)) renameSync(backupPath, pkgPath);
}

/** exports without the source condition, in the same order */
export function publishedExports(exports) {
  if (typeof exports !== 'object' || exports === null) return exports;
  return Object.fromEntries(
    Object.entries(exports).map(([key, target]) => [key, typeof target === 'object' && target !== null ? Object.fromEntries(Object.entries(target).filter(([c]) => c !== SOURCE_CONDITION)) : target]),
  );
}

const command = process.argv[2];
if (command === 'strip') {
  restore();
  const text = readFileSync(pkgPath, 'utf8');
  const pkg = JSON.parse(text);
  writeFileSync(backupPath, text);
  writeFileSync(pkgPath, `${JSON.stringify({ ...pkg, exports: publishedExports(pkg.exports) }, null, 2)}\n`);
} else if (command === 'restore') {
  restore();
} else {
  process.stderr.write('usage: publish-manifest.mjs strip|restore\n');
  process.exit(2);
}
