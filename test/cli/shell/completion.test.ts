/**
 * Shell completion (@oclif/plugin-autocomplete, registered in package.json `oclif.plugins`): the
 * setup line `agentpay autocomplete script bash` prints, the completion cache it points at
 * (built by `agentpay autocomplete --refresh-cache` under the XDG cache dir), and a real bash
 * that sources them and completes commands, subcommands and flags of the manifest.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { cli, removeTempDirs, tempDir } from '../helpers.js';

afterAll(removeTempDirs);

const manifest = JSON.parse(readFileSync(fileURLToPath(new URL('../../../oclif.manifest.json', import.meta.url)), 'utf8')) as {
  commands: Record<string, { hidden?: boolean }>;
};

/** a private HOME and XDG cache dir, so the cache this test builds is its own */
function home() {
  const dir = tempDir('agentpay-completion-');
  const cache = join(dir, 'cache');
  return { configDir: dir, cache, env: { HOME: dir, XDG_CACHE_HOME: cache } };
}

/**
 * What bash completes for the words typed so far (the last one is being completed), with the
 * setup line of `agentpay autocomplete script bash` evaluated as ~/.bashrc would.
 */
async function complete(setup: string, words: string[]): Promise<string[]> {
  const quoted = words.map((w) => `'${w.replace(/'/g, `'\\''`)}'`).join(' ');
  const script = [
    setup,
    `COMP_WORDS=(agentpay ${quoted}); COMP_CWORD=${words.length}; COMPREPLY=()`,
    '_agentpay_autocomplete',
    'printf "%s\\n" "${COMPREPLY[@]}"',
  ].join('\n');
  const r = await execa('bash', ['--norc', '--noprofile', '-c', script], { reject: false });
  expect(r.stderr).toBe('');
  expect(r.exitCode).toBe(0);
  return [...new Set(String(r.stdout).split('\n').filter(Boolean))].sort();
}

describe('agentpay autocomplete', () => {
  it('prints a bash setup line pointing into the cache dir, builds the cache with --refresh-cache, and bash completes commands and flags from it', async () => {
    const h = home();
    const script = await cli(['autocomplete', 'script', 'bash'], h);
    expect(script.exitCode).toBe(0);
    const setupPath = join(h.cache, 'agentpay', 'autocomplete', 'bash_setup');
    expect(script.stdout).toContain(`AGENTPAY_AC_BASH_SETUP_PATH=${setupPath}`);

    // before the cache exists the setup line is harmless: no completion function yet
    expect(existsSync(setupPath)).toBe(false);

    const refresh = await cli(['autocomplete', '--refresh-cache'], h);
    expect(refresh.exitCode).toBe(0);
    // the cache is all it does: no setup instructions with --refresh-cache
    expect(refresh.stdout).not.toContain('Setup Instructions');
    const fn = join(h.cache, 'agentpay', 'autocomplete', 'functions', 'bash', 'agentpay.bash');
    expect(readFileSync(setupPath, 'utf8')).toContain(fn);
    const bash = readFileSync(fn, 'utf8');
    // every visible command of the manifest, with its flags (its own and the global ones)
    const visible = Object.entries(manifest.commands).filter(([, c]) => !c.hidden).map(([id]) => id);
    expect(visible.length).toBeGreaterThan(60);
    for (const id of visible) expect(bash).toMatch(new RegExp(`^${id} `, 'm'));
    expect(bash).toMatch(/^search .*--limit/m);
    expect(bash).toMatch(/^wallets:fund .*--amount/m);
    // zsh gets its completion function too, naming the commands with their summaries
    const zsh = readFileSync(join(h.cache, 'agentpay', 'autocomplete', 'functions', 'zsh', '_agentpay'), 'utf8');
    expect(zsh).toContain('#compdef agentpay');
    expect(zsh).toContain('"search[Search the marketplace');

    // a real bash, set up with the printed line
    const setup = script.stdout.trim();
    const top = await complete(setup, ['']);
    expect(top).toEqual(expect.arrayContaining(['wallets', 'search', 'buy', 'receipts', 'approvals', 'autocomplete']));
    expect(await complete(setup, ['wal'])).toEqual(['wallets']);
    expect(await complete(setup, ['se'])).toEqual(['search', 'sessions']);
    expect(await complete(setup, ['sea'])).toEqual(['search']);
    expect(await complete(setup, ['sessions', ''])).toEqual(['close', 'list', 'show']);
    expect(await complete(setup, ['wallets', 'fu'])).toEqual(['fund']);
    expect(await complete(setup, ['receipts', ''])).toEqual(['list', 'show', 'verify']);
    expect(await complete(setup, ['search', '--li'])).toEqual(['--limit']);
    expect(await complete(setup, ['wallets', 'fund', '--am'])).toEqual(['--amount']);
  });

  it('prints setup instructions for zsh naming the script command, and builds the same cache', async () => {
    const h = home();
    const r = await cli(['autocomplete', 'zsh'], h);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('agentpay autocomplete script zsh');
    expect(existsSync(join(h.cache, 'agentpay', 'autocomplete', 'functions', 'zsh', '_agentpay'))).toBe(true);
    const script = await cli(['autocomplete', 'script', 'zsh'], h);
    expect(script.stdout).toContain(`AGENTPAY_AC_ZSH_SETUP_PATH=${join(h.cache, 'agentpay', 'autocomplete', 'zsh_setup')}`);
  });
});
