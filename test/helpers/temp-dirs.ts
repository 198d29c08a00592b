/** Temporary directories a test file makes and removes after each test, and a path's permission bits. */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** `make()` returns a new directory; `removeAll()` (from afterEach) deletes every one made so far. */
export function tempDirs(prefix: string) {
  const dirs: string[] = [];
  return {
    make(): string {
      const d = mkdtempSync(join(tmpdir(), prefix));
      dirs.push(d);
      return d;
    },
    removeAll(): void {
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    },
  };
}

/** The permission bits of a file or directory, e.g. 0o600. */
export const modeOf = (path: string): number => statSync(path).mode & 0o777;
