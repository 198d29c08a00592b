/**
 * oclif's command manifest: derived from dist/, rewritten when dist/ is newer, and the
 * reason a run imports only the command it runs.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, utimesSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { buildManifest, isManifestStale, MANIFEST_FILE } from '../../../src/cli/manifest.js';
import { removeTempDirs, tempDir } from '../helpers.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));
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

  it('is written by the first run, rewritten by the next once a build is newer, and then left alone', async () => {
    // a private package root (bin/run.js and package.json copied, dist/ and node_modules linked), so
    // the CLI runs of other test files, which share the real manifest, cannot rewrite this one
    const dir = tempDir('agentpay-manifest-');
    mkdirSync(join(dir, 'bin'));
    copyFileSync(join(root, 'bin', 'run.js'), join(dir, 'bin', 'run.js'));
    copyFileSync(join(root, 'package.json'), join(dir, 'package.json'));
    symlinkSync(join(root, 'dist'), join(dir, 'dist'));
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
    const run = (...args: string[]) => execa(process.execPath, [join(dir, 'bin', 'run.js'), ...args], {
      cwd: dir, reject: false, env: { AGENTPAY_CONFIG_DIR: tempDir(), NODE_ENV: 'production' },
    });
    const own = join(dir, MANIFEST_FILE);
    expect(isManifestStale(dir)).toBe(true);

    const first = await run('--version');
    expect(first.exitCode).toBe(0);
    expect(first.stdout).toMatch(/^agentpay-cli\/\d+\.\d+\.\d+/);
    const ids = (path: string) => Object.keys((JSON.parse(readFileSync(path, 'utf8')) as { commands: object }).commands).sort();
    expect(ids(own)).toEqual(compiledCommandIds());

    const built = statSync(stamp).mtime;
    const hourBefore = new Date(built.getTime() - 3_600_000);
    utimesSync(own, hourBefore, hourBefore);
    expect(isManifestStale(dir)).toBe(true);
    expect((await run('--version')).exitCode).toBe(0);
    expect(isManifestStale(dir)).toBe(false);
    const rewritten = statSync(own).mtimeMs;
    expect(rewritten).toBeGreaterThanOrEqual(built.getTime());

    const again = await run('receipts', 'list', '--help');
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toContain('receipts list');
    expect(statSync(own).mtimeMs).toBe(rewritten);
  });
});
