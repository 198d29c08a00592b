/**
 * A failed command whose stdout is not a terminal prints the error envelope
 * `{"error":{"code","message","details"}}` on stdout as well (results are JSON there too), so
 * `agentpay ... | jq` sees the failure; the message for people stays on stderr. On a terminal
 * (a real pseudo-terminal, through script(1)) stdout gets nothing; with --json stderr gets nothing.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, cli, json, removeTempDirs, tempDir } from '../helpers.js';

afterAll(removeTempDirs);
const configDir = tempDir();
const run = (...args: string[]) => cli(args, { configDir });
/** the environment of a CLI run: no AGENTPAY_* from outside, a private config dir */
const env = {
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AGENTPAY_'))),
  AGENTPAY_CONFIG_DIR: configDir,
  NODE_ENV: 'production',
};
const sh = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

describe('a failure when stdout is not a terminal', () => {
  it('is the envelope on stdout and `error CODE` with the next step on stderr, with the same exit code', async () => {
    const r = await run('wallets', 'list');
    expect(r.exitCode).toBe(3);
    expect(json(r)).toEqual({ error: { code: 'NO_GATEWAY', message: 'no gateway configured', details: {} } });
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^error NO_GATEWAY: no gateway configured\nTry: /);
  });

  it('covers usage errors from parsing and from the unknown-command hook', async () => {
    const flag = await run('search', '--limit', '0');
    expect(flag.exitCode).toBe(2);
    expect(json(flag).error).toMatchObject({ code: 'USAGE', details: { flag: '--limit' } });
    expect(flag.stderr).toMatch(/^error USAGE: --limit: /);

    const missing = await run('wallets', 'show');
    expect(missing.exitCode).toBe(2);
    expect(json(missing).error).toMatchObject({ code: 'USAGE', details: { arg: 'ID' } });

    const unknown = await run('serach');
    expect(unknown.exitCode).toBe(2);
    expect(json(unknown).error).toMatchObject({ code: 'USAGE', details: { command: 'serach', suggestion: 'search' } });
    expect(unknown.stderr).toContain('error USAGE: unknown command "serach"');
  });

  it('reaches jq through a real pipe, while the exit status stays the command\'s', async () => {
    const r = await execa('bash', ['-c', `set -o pipefail; ${sh(process.execPath)} ${sh(BIN)} wallets list 2>/dev/null | jq -r .error.code`], { env, extendEnv: false, reject: false });
    expect(r.stdout).toBe('NO_GATEWAY');
    expect(r.exitCode).toBe(3);
  });

  it('with --json is the envelope on stdout only, as before', async () => {
    const r = await run('wallets', 'list', '--json');
    expect(r.exitCode).toBe(3);
    expect(json(r).error.code).toBe('NO_GATEWAY');
    expect(r.stderr).toBe('');
  });
});

describe('a failure on a terminal', () => {
  it('prints nothing on stdout: only the message for people, on stderr', async () => {
    const dir = tempDir();
    const err = join(dir, 'stderr');
    // script(1) runs the command on a pseudo-terminal: stdout is a TTY; stderr goes to a file
    const r = await execa('script', ['-qec', `${sh(process.execPath)} ${sh(BIN)} wallets list 2>${sh(err)}; echo "exit=$?"`, '/dev/null'], {
      env, extendEnv: false, reject: false, stdin: 'ignore',
    });
    const terminal = String(r.stdout).replace(/\r/g, '');
    expect(terminal.trim()).toBe('exit=3');
    expect(terminal).not.toContain('"error"');
    expect(readFileSync(err, 'utf8')).toMatch(/^error NO_GATEWAY: no gateway configured\nTry: /);
  });
});
