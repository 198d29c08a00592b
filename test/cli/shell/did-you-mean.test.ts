/**
 * "Did you mean" for a mistyped command or flag, through the built binary: the nearest known
 * command or flag is named in the usage error (and in details.suggestion), never run, and
 * nothing waits for an answer on stdin.
 */
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { closest, editDistance } from '../../../src/cli/suggest.js';
import { BIN, cli, json, removeTempDirs, tempDir } from '../helpers.js';

afterAll(removeTempDirs);
const configDir = tempDir();
const run = (...args: string[]) => cli(args, { configDir });

describe('closest', () => {
  it('counts a swap of neighbouring letters as one edit, and suggests only a near word', () => {
    expect(editDistance('serach', 'search')).toBe(1);
    expect(editDistance('limt', 'limit')).toBe(1);
    expect(editDistance('天気', '天気予報')).toBe(2);
    expect(closest('serach', ['search', 'signup', 'sandbox'])).toBe('search');
    expect(closest('foo', ['balance', 'fund', 'freeze', 'show'])).toBeUndefined();
    // two equally near words: no guess
    expect(closest('lst', ['last', 'list'])).toBeUndefined();
    // the one word that starts with what was typed
    expect(closest('bal', ['balance', 'breaker'])).toBe('balance');
  });
});

describe('a mistyped command', () => {
  it('agentpay serach suggests search (exit 2, USAGE, the next step its help)', async () => {
    const r = await run('serach', 'weather');
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('error USAGE: unknown command "serach weather"; did you mean "search"?');
    expect(r.stderr).toContain('Try: agentpay search --help');
    const j = await run('serach', '--json');
    expect(j.exitCode).toBe(2);
    expect(json(j)).toEqual({ error: { code: 'USAGE', message: 'unknown command "serach"; did you mean "search"?', details: { command: 'serach', suggestion: 'search' } } });
  });

  it('suggests a subcommand under its topic, and the words after a mistyped topic', async () => {
    const r = await run('wallets', 'balnce', '--json');
    expect(r.exitCode).toBe(2);
    expect(json(r).error.details).toEqual({ command: 'wallets balnce', suggestion: 'wallets balance' });
    expect(json(r).error.message).toContain('wallets has: balance,');
    const deep = await run('recipts', 'verfy', '--json');
    expect(json(deep).error.details).toEqual({ command: 'recipts verfy', suggestion: 'receipts verify' });
  });

  it('suggests nothing when no command is near', async () => {
    const r = await run('wallets', 'foo', '--json');
    expect(json(r).error.details).toEqual({ command: 'wallets foo' });
    expect(json(r).error.message).not.toContain('did you mean');
  });

  it('never waits on stdin, even when stdin stays open', async () => {
    // a pipe that is never closed: a prompt would wait on it until the timeout kills the process
    const p = execa(process.execPath, [BIN, 'serach'], {
      env: { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AGENTPAY_'))), AGENTPAY_CONFIG_DIR: configDir, NODE_ENV: 'production' },
      extendEnv: false,
      stdin: 'pipe',
      reject: false,
      timeout: 30_000,
    });
    const r = await p;
    expect(r.timedOut).toBe(false);
    expect(r.exitCode).toBe(2);
    expect(String(r.stderr)).toContain('did you mean "search"?');
  });
});

describe('a mistyped flag', () => {
  it('agentpay search --limt 3 suggests --limit (exit 2, details.flag and details.suggestion)', async () => {
    const r = await run('search', '--limt', '3');
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('error USAGE: unknown flag --limt; did you mean --limit?');
    expect(r.stderr).toContain('Try: agentpay search --help');
    const j = await run('search', '--limt=3', '--json');
    expect(j.exitCode).toBe(2);
    expect(json(j)).toEqual({ error: { code: 'USAGE', message: 'unknown flag --limt; did you mean --limit?', details: { flag: '--limt', suggestion: '--limit' } } });
  });

  it('suggests global flags too, one suggestion per mistyped flag', async () => {
    const r = await run('wallets', 'list', '--gatway-url', 'https://127.0.0.1:9', '--jsno');
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('unknown flags --gatway-url (did you mean --gateway-url?), --jsno (did you mean --json?)');
  });
});
