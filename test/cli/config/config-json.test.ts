/**
 * config.json under stress: many processes saving profiles at once, a lock left behind
 * by a crashed process, and files of the wrong shape or that cannot be read. A profile
 * holds an API key (after `login --email`, a new one that exists nowhere else), so none
 * may be lost and a file agentpay does not understand is never overwritten.
 */
import { mkdirSync, readFileSync, utimesSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { CliError } from '../../../src/cli/errors/index.js';
import { configPath, loadProfiles, removeProfile, saveProfile, useProfile } from '../../../src/cli/profile.js';
import { cli, json, removeTempDirs, tempDir } from '../helpers.js';

afterAll(removeTempDirs);

const PROFILE_MODULE = fileURLToPath(new URL('../../../dist/src/cli/profile.js', import.meta.url));
const profile = (n: number) => ({ baseUrl: 'https://127.0.0.1:4402', apiKey: `ap_w_key${n}xxxxxxxxxxxxxx` });

/** the CliError `fn` throws */
function thrown(fn: () => unknown): CliError {
  try {
    fn();
  } catch (e) {
    if (e instanceof CliError) return e;
    throw e;
  }
  throw new Error('expected a CliError');
}

describe('saving profiles from many processes at once', () => {
  it('keeps every profile: each read-modify-write of config.json holds a lock', async () => {
    const dir = tempDir();
    const env = { ...process.env, AGENTPAY_CONFIG_DIR: dir };
    // 6 processes, each saving 15 profiles of its own as fast as it can
    const script = `const m = await import(${JSON.stringify(PROFILE_MODULE)});
      const w = process.argv[1];
      for (let i = 0; i < 15; i++) m.saveProfile('w' + w + '-' + i, { baseUrl: 'https://h:1', apiKey: 'ap_w_' + w + '_' + i });`;
    await Promise.all(Array.from({ length: 6 }, (_, w) => execa(process.execPath, ['--input-type=module', '-e', script, String(w)], { env, extendEnv: false })));
    const saved = Object.keys(loadProfiles({ AGENTPAY_CONFIG_DIR: dir }).profiles);
    expect(saved).toHaveLength(90);
    expect(existsSync(join(dir, 'config.json.lock'))).toBe(false);
  });

  it('takes over a lock left by a process that died, and one older than any save could take', () => {
    const dir = tempDir();
    const env = { AGENTPAY_CONFIG_DIR: dir };
    const lock = join(dir, 'config.json.lock');
    writeFileSync(lock, `${2 ** 22 + 1} dead\n`); // no such process
    saveProfile('a', profile(1), env);
    expect(existsSync(lock)).toBe(false);

    writeFileSync(lock, `${process.pid} alive-but-stuck\n`);
    const minuteAgo = new Date(Date.now() - 60_000);
    utimesSync(lock, minuteAgo, minuteAgo);
    useProfile('a', env);
    removeProfile('a', env);
    expect(loadProfiles(env).profiles).toEqual({});
    expect(existsSync(lock)).toBe(false);
  });
});

describe('a config.json agentpay does not understand', () => {
  const shapes: Array<[string, string]> = [
    ['profiles is a list', '{"profiles":[]}'],
    ['null', 'null'],
    ['a list', '[]'],
    ['a string', '"default"'],
    ['a profile that is not an object', '{"profiles":{"acme":"ap_w_x"}}'],
    ['a profile without its key', '{"profiles":{"acme":{"baseUrl":"https://h:1"}}}'],
  ];
  for (const [what, text] of shapes) {
    it(`is CONFIG_INVALID naming the file, and never rewritten (${what})`, () => {
      const dir = tempDir();
      const env = { AGENTPAY_CONFIG_DIR: dir };
      writeFileSync(configPath(env), text);
      for (const write of [() => saveProfile('c', profile(1), env), () => useProfile('c', env), () => removeProfile('c', env), () => loadProfiles(env)]) {
        const e = thrown(write);
        expect(e.code).toBe('CONFIG_INVALID');
        expect(e.message).toContain(configPath(env));
        expect(e.tryNext).toMatch(/fix/);
      }
      expect(readFileSync(configPath(env), 'utf8')).toBe(text);
    });
  }

  it('takes a missing "profiles" as none, and keeps the file otherwise as it was', () => {
    const dir = tempDir();
    const env = { AGENTPAY_CONFIG_DIR: dir };
    writeFileSync(configPath(env), '{}');
    saveProfile('c', profile(1), env);
    expect(loadProfiles(env)).toEqual({ current: 'c', profiles: { c: profile(1) } });
  });

  it('through the CLI: exit 1 with CONFIG_INVALID, not a crash (null)', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'config.json'), 'null');
    const r = await cli(['config', '--json'], { configDir: dir });
    expect(r.exitCode, r.stderr).toBe(1);
    expect(json(r).error).toMatchObject({ code: 'CONFIG_INVALID', message: expect.stringContaining(join(dir, 'config.json')) });
    expect(readFileSync(join(dir, 'config.json'), 'utf8')).toBe('null');
  });

  it('that cannot be read is CONFIG_UNREADABLE saying why, and never suggests removing it', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'config.json')); // EISDIR; EACCES (not testable as root) takes the same path
    const r = await cli(['config', '--json'], { configDir: dir });
    expect(r.exitCode, r.stderr).toBe(1);
    const { error } = json(r);
    expect(error).toMatchObject({ code: 'CONFIG_UNREADABLE', details: { path: join(dir, 'config.json'), cause: 'EISDIR' } });
    expect(error.message).toContain('cannot be read');
    const e = thrown(() => saveProfile('c', profile(1), { AGENTPAY_CONFIG_DIR: dir }));
    expect(`${e.message} ${e.tryNext}`).not.toMatch(/remove|delete/i);
  });
});
