/**
 * `agentpay policies lint`: offline, no gateway anywhere (no AGENTPAY_* variables, no
 * ./.agentpay), compiler-style diagnostics on stderr and a meaningful exit code.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { lintDiagnostics, lintFiles, lintText } from '../../../src/cli/policies.js';
import { FIXTURE_NAMES } from '../../policies/helpers.js';
import { cli, json, tempDir } from '../helpers.js';

const configDir = tempDir();
const work = tempDir('agentpay-lint-');
const run = (...args: string[]) => cli(args, { configDir, cwd: work });
const fixture = (name: string) => fileURLToPath(new URL(`../../../fixtures/policies/${name}`, import.meta.url));

/** Two errors: a bad amount on line 2 and a misspelt section type on line 3. */
const BAD = 'deny "x":\n  price >> 500\naproval:\n  price > 5\n';
writeFileSync(join(work, 'bad.policy'), BAD);
writeFileSync(join(work, 'good.policy'), 'approval "big":\n  price > 500\n');

describe('agentpay policies lint', () => {
  it('passes every fixture document with exit 0, nothing on stderr, and {files} on stdout', async () => {
    const files = FIXTURE_NAMES.map(fixture);
    const r = await run('policies', 'lint', ...files, '--json');
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(json(r)).toEqual({ files: files.map((file) => ({ file, ok: true, errors: [] })) });
  });

  it('prints each error as file:line:col: message on stderr and exits 1', async () => {
    const r = await run('policies', 'lint', 'bad.policy');
    expect(r.exitCode).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toEqual([
      'bad.policy:2:10: expected an amount in minor units, e.g. 500, found ">"',
      'bad.policy:3:1: expected a section header: approval, deny, allow or budget, found "aproval". Did you mean "approval"?',
    ]);
    // piped stdout: the same result for scripts
    const { files } = json(r);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatchObject({ file: 'bad.policy', ok: false });
    expect(files[0].errors[0]).toEqual({ line: 2, column: 10, expected: 'an amount in minor units, e.g. 500', message: expect.stringContaining('found ">"') });
  });

  it('lints several files in one run and fails if any one fails, saying which', async () => {
    const r = await run('policies', 'lint', 'good.policy', 'bad.policy', '--json');
    expect(r.exitCode).toBe(1);
    expect(json(r).files.map((f: { file: string; ok: boolean }) => [f.file, f.ok])).toEqual([['good.policy', true], ['bad.policy', false]]);
    expect(r.stderr).not.toContain('good.policy');
    expect(r.stderr).toContain('bad.policy:2:10:');
  });

  it('refuses a missing file or no file at all as a usage error (exit 2)', async () => {
    const missing = await run('policies', 'lint', 'good.policy', 'nope.policy');
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain('error USAGE: nope.policy does not exist');
    const none = await run('policies', 'lint');
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toContain('name at least one policy document');
  });
});

describe('the lint report a person reads', () => {
  it('says ok for clean files, and counts errors and files otherwise', () => {
    expect(lintText(lintFiles([join(work, 'good.policy')]))).toBe('ok');
    expect(lintText(lintFiles([join(work, 'good.policy'), fixture('budget.policy')]))).toBe('ok (2 files)');
    const bad = lintFiles([join(work, 'good.policy'), join(work, 'bad.policy')]);
    expect(lintText(bad)).toBe('2 errors in 1 of 2 files');
    expect(lintDiagnostics(bad)).toHaveLength(2);
  });
});
