/**
 * Input the CLI must refuse rather than guess at: an empty value never widens a key, a bare
 * `sandbox outage` never takes a service down, a path under a file is not a crash, --limit stays
 * in its documented range, and an unknown command is a usage error in the CLI's own format.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { cli, gatewayEnv, json, removeTempDirs, tempDir } from '../helpers.js';

let t: TestGateway;
const configDir = tempDir();
let env: Record<string, string>;

beforeAll(async () => {
  t = await startTestGateway();
  env = gatewayEnv(t, t.creds.workspace.apiKey);
});
afterAll(async () => {
  await t.close();
  removeTempDirs();
});

const run = (...args: string[]) => cli(args, { configDir, env });
const keyCount = async () => (await t.workspace.keys.list()).keys.length;

describe('agentpay keys create with an empty or zero value', () => {
  it('refuses --scopes "" like --scopes "," (exit 2) and creates no key', async () => {
    const before = await keyCount();
    for (const scopes of ['', ',', ' ']) {
      const r = await run('keys', 'create', '--scopes', scopes);
      expect(r.exitCode, `--scopes ${JSON.stringify(scopes)}: ${r.stdout}${r.stderr}`).toBe(2);
      expect(r.stderr).toContain('error USAGE: --scopes: list at least one scope');
    }
    const asJson = await run('keys', 'create', '--scopes', '', '--json');
    expect(asJson.exitCode).toBe(2);
    expect(json(asJson).error).toMatchObject({ code: 'USAGE', message: expect.stringContaining('--scopes') });
    expect(await keyCount()).toBe(before);
  });

  it('checks its flags before looking for a gateway: a bad value is a usage error even with none configured', async () => {
    const nowhere = tempDir(); // no profile, no key, no ./.agentpay
    for (const args of [['--scopes', ''], ['--expires-in', '0s']]) {
      const r = await cli(['keys', 'create', ...args, '--json'], { configDir: nowhere, cwd: nowhere });
      expect(r.exitCode, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe(2);
      expect(json(r).error.code).toBe('USAGE');
    }
  });

  it('refuses --scopes "" together with --for-agent, creating nothing', async () => {
    const before = await keyCount();
    const r = await run('keys', 'create', '--for-agent', '--scopes', '');
    expect(r.exitCode).toBe(2);
    expect(await keyCount()).toBe(before);
  });

  it('refuses --expires-in 0s saying it must be more than zero, and an empty --expires-in, creating nothing', async () => {
    const before = await keyCount();
    for (const zero of ['0s', '0d', '00h']) {
      const r = await run('keys', 'create', '--expires-in', zero);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain(`error USAGE: --expires-in: must be more than zero, e.g. 30d; got "${zero}"`);
      expect(r.stderr).not.toContain('expected a number and a unit');
    }
    const empty = await run('keys', 'create', '--expires-in', '');
    expect(empty.exitCode).toBe(2);
    expect(empty.stderr).toContain('--expires-in: expected a number and a unit');
    expect(await keyCount()).toBe(before);
  });
});

describe('agentpay sandbox outage', () => {
  const SERVICES = { screening: 'screeningDown', pricing: 'pricingDown', payouts: 'payoutsDown' } as const;
  const opEnv = () => gatewayEnv(t, t.creds.operatorKey);

  for (const [service, field] of Object.entries(SERVICES)) {
    it(`${service}: without --down or --up is a usage error (exit 2) that changes nothing; --down and --up still work`, async () => {
      const bare = await cli(['sandbox', 'outage', service], { configDir, env: opEnv() });
      expect(bare.exitCode).toBe(2);
      expect(bare.stderr).toContain('error USAGE: pass exactly one of --down or --up');
      const bareJson = await cli(['sandbox', 'outage', service, '--json'], { configDir, env: opEnv() });
      expect(bareJson.exitCode).toBe(2);
      expect(json(bareJson).error.code).toBe('USAGE');
      expect((await t.operator.sandbox.settings())[field]).toBe(false);

      const down = await cli(['sandbox', 'outage', service, '--down', '--json'], { configDir, env: opEnv() });
      expect(down.exitCode, down.stderr).toBe(0);
      expect(json(down).settings[field]).toBe(true);
      const up = await cli(['sandbox', 'outage', service, '--up', '--json'], { configDir, env: opEnv() });
      expect(up.exitCode, up.stderr).toBe(0);
      expect(json(up).settings[field]).toBe(false);
    });
  }
});

describe('agentpay init under a file', () => {
  it('refuses DIR inside a regular file with NOT_A_DIRECTORY (exit 1) naming the file, not a crash', async () => {
    const cwd = tempDir('agentpay-init-');
    writeFileSync(join(cwd, 'f.pem'), 'x');
    for (const dir of ['f.pem/sub', 'f.pem/a/b']) {
      const r = await cli(['init', dir, '--template', 'rest', '--yes', '--json'], { configDir: cwd, cwd });
      expect(r.exitCode, r.stderr).toBe(1);
      expect(json(r).error).toMatchObject({ code: 'NOT_A_DIRECTORY', message: `${join(cwd, 'f.pem')} exists and is not a directory` });
      expect(r.stderr).toBe('');
    }
  });
});

describe('agentpay search --limit', () => {
  it('refuses a --limit outside 1..100 as a usage error naming --limit (exit 2), and accepts 100', async () => {
    for (const limit of ['101', '100000', '0']) {
      const r = await run('search', 'pdf', '--limit', limit, '--json');
      expect(r.exitCode, r.stdout).toBe(2);
      expect(json(r).error).toMatchObject({ code: 'USAGE', message: expect.stringContaining('--limit') });
    }
    // a person reads oclif's own refusal (the integer's minimum) on one line naming the flag
    const human = await run('search', 'pdf', '--limit', '0');
    expect(human.exitCode).toBe(2);
    expect(human.stderr).toMatch(/^error USAGE: --limit: expected an integer greater than or equal to 1 but received: 0$/m);
    expect(human.stderr).not.toContain('Parsing');
    const ok = await run('search', 'pdf', '--limit', '100', '--json');
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(json(ok).results).toEqual(expect.any(Array));
  });
});

describe('an unknown command', () => {
  it('with --json is a USAGE error envelope on stdout (exit 2) naming it with spaces', async () => {
    const r = await cli(['wallets', 'foo', '--json'], { configDir });
    expect(r.exitCode).toBe(2);
    const { error } = json(r);
    expect(error.code).toBe('USAGE');
    expect(error.message).toContain('unknown command "wallets foo"');
    expect(error.message).toContain('list'); // the wallets commands
    expect(error.details).toEqual({ command: 'wallets foo' });
    expect(r.stderr).not.toContain('wallets:foo');
  });

  it("without --json is `error USAGE` on stderr with the topic's help as the next step", async () => {
    const r = await cli(['wallets', 'foo'], { configDir });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('error USAGE: unknown command "wallets foo"');
    expect(r.stderr).toContain('Try: agentpay wallets --help');
    expect(r.stderr).not.toContain('›');

    const top = await cli(['frobnicate'], { configDir });
    expect(top.exitCode).toBe(2);
    expect(top.stderr).toContain('error USAGE: unknown command "frobnicate"');
    expect(top.stderr).toContain('Try: agentpay --help');
  });
});
