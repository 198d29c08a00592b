/**
 * The run-time half of test/conventions/backends.test.ts: a test that starts a gateway or a store
 * (startTestGateway, openTestStore, backendOptions, the binary's `dev`/`gateway start`) from a file
 * that test/store-reach.ts does not count as reaching the store fails at once, naming the file, so
 * a way of starting one that reading imports misses (a computed import, a helper's helper spawned
 * as a child) cannot keep a file off PostgreSQL unnoticed.
 */
import { relative } from 'node:path';
import { expect } from 'vitest';
import { ROOT, SQLITE_ONLY, storeReach } from '../store-reach.js';

const checked = new Set<string>();

export function checkStoreReach(what: string): void {
  let path: string | undefined;
  try {
    path = expect.getState().testPath;
  } catch {
    return; // outside a test
  }
  if (!path) return;
  const file = relative(ROOT, path);
  if (checked.has(file) || file in SQLITE_ONLY) return;
  if (storeReach(file).follows.length === 0) {
    throw new Error(`${file} starts ${what}, but test/store-reach.ts does not see it reach the store, so it would not run on PostgreSQL: import the helper that starts it (test/helpers/gateway.ts, test/cli/helpers.ts) in a way it reads, or add the file to SQLITE_ONLY with the reason`);
  }
  checked.add(file);
}
