/**
 * oclif's command manifest: derived from dist/, rewritten when dist/ is newer, and the
 * reason a run imports only the command it runs.
 */
import { readdirSync, readFileSync, statSync, utimesSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { buildManifest, isManifestStale, MANIFEST_FILE } from '../../src/cli/manifest.js';
import { cli, removeTempDirs, tempDir } from './helpers.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const manifestPath = join(root, MANIFEST_FILE);
const stamp = join(root, 'dist', '.tsbuildinfo');

/** command ids from the compiled command files, e.g. dist/commands/receipts/list.js -> receipts:list */
function compiledCommandIds(dir = join(root, 'dist', 'commands')): string[] {
  const ids: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) ids.push(...compiledCommandIds(path));
    else if (entry.name.endsWith('.js')) {
      const id = relative(join(root, 'dist', 'commands'), path).replace(/\.js$/, '').replace(/\/index$/, '').split('/').join(':');
      ids.push(id);
    }
  }
  return ids.sort();
}

afterAll(removeTempDirs);

describe('oclif.manifest.json', () => {
  it('lists every compiled command with exactly what its class declares', async () => {
    const written = JSON.parse(readFileSync(manifestPath, 'utf8')) as { commands: Record<string, unknown> };
    expect(Object.keys(written.commands).sort()).toEqual(compiledCommandIds());
    const fresh = await buildManifest(root);
    expect(written.commands).toEqual(JSON.parse(JSON.stringify(fresh.commands)));
  });

  it('is rewritten by the next run once a build is newer, and then left alone', async () => {
    const built = statSync(stamp).mtime;
    const hourBefore = new Date(built.getTime() - 3_600_000);
    utimesSync(manifestPath, hourBefore, hourBefore);
    expect(isManifestStale(root)).toBe(true);

    const configDir = tempDir();
    const r = await cli(['--version'], { configDir });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^agentpay\/\d+\.\d+\.\d+/);
    expect(isManifestStale(root)).toBe(false);
    const rewritten = statSync(manifestPath).mtimeMs;
    expect(rewritten).toBeGreaterThanOrEqual(built.getTime());

    const again = await cli(['receipts', 'list', '--help'], { configDir });
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toContain('receipts list');
    expect(statSync(manifestPath).mtimeMs).toBe(rewritten);
  });
});
