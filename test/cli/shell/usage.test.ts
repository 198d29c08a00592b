/** The CLI without a gateway: help, usage errors, exit codes and next steps. */
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli, json, removeTempDirs, tempDir } from '../helpers.js';

/** a loopback port nothing listens on */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((res) => s.listen(0, '127.0.0.1', res));
  const { port } = s.address() as { port: number };
  await new Promise((res) => s.close(res));
  return port;
}

afterAll(removeTempDirs);
const configDir = tempDir();
const run = (...args: string[]) => cli(args, { configDir });

describe('agentpay --help', () => {
  it('lists the topics and the top-level commands', async () => {
    const r = await run('--help');
    expect(r.exitCode).toBe(0);
    for (const topic of ['config', 'gateway', 'keys', 'wallets']) expect(r.stdout).toMatch(new RegExp(`^  ${topic} `, 'm'));
    for (const command of ['dev', 'login', 'signup', 'whoami']) expect(r.stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
  });
});

describe('usage errors', () => {
  it('a missing required value without a terminal is an error naming the flag, exit 2', async () => {
    const r = await run('wallets', 'create', '--gateway-url', 'https://127.0.0.1:9', '--api-key', 'ap_w_x');
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('error USAGE: --owner-type is required (there is no terminal to ask on)');
    expect(r.stderr).toContain('Try: pass --owner-type <agent|workspace>');
  });

  it('an agent wallet without a key is refused before any request', async () => {
    const r = await run('wallets', 'create', '--owner-type', 'agent', '--owner-id', 'a', '--gateway-url', 'https://127.0.0.1:9', '--api-key', 'ap_w_x');
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('--key-file');
  });

  it('an unknown flag is exit 2; with --json the error is the envelope on stdout', async () => {
    const r = await run('wallets', 'list', '--nope');
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/^error USAGE: /);
    const j = await run('wallets', 'list', '--nope', '--json');
    expect(j.exitCode).toBe(2);
    // the flag is named in details; nothing is near enough to --nope to suggest
    expect(json(j)).toEqual({ error: { code: 'USAGE', message: 'unknown flag --nope', details: { flag: '--nope' } } });
  });
});

describe('usage error details', () => {
  it('a missing argument names it in details.arg', async () => {
    const r = await run('wallets', 'show', '--json');
    expect(r.exitCode).toBe(2);
    expect(json(r).error).toMatchObject({ code: 'USAGE', message: expect.stringMatching(/^Missing 1 required arg/), details: { arg: 'ID' } });
  });

  it('init names its flags with the leading -- in details.flag, like every other command', async () => {
    const cwd = tempDir('agentpay-init-');
    const price = await cli(['init', 'x', '--template', 'rest', '--yes', '--price', '1.50', '--json'], { configDir: cwd, cwd });
    expect(price.exitCode).toBe(1);
    expect(json(price).error).toMatchObject({ code: 'VALIDATION_FAILED', details: { flag: '--price' } });
    expect(json(price).error.details.field).toBeUndefined();
    const template = await cli(['init', 'x', '--template', 'nope', '--yes', '--json'], { configDir: cwd, cwd });
    expect(template.exitCode).toBe(2);
    expect(json(template).error).toMatchObject({ code: 'USAGE', details: { flag: '--template' } });
  });

  it('init without a terminal and without --name takes the directory\'s name, as documented', async () => {
    const cwd = tempDir('agentpay-init-');
    const r = await cli(['init', 'weather-api', '--template', 'rest', '--price', '25', '--category', 'weather', '--description', 'Forecasts by city', '--json'], { configDir: cwd, cwd });
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    expect(json(r).values).toMatchObject({ name: 'weather-api', priceMinor: '25' });
    expect(JSON.parse(readFileSync(join(cwd, 'weather-api', 'package.json'), 'utf8')).name).toBe('weather-api');
  });
});

describe('a topic without a command', () => {
  it('with --json prints its commands as JSON (exit 0), not the help text', async () => {
    const r = await run('wallets', '--json');
    expect(r.exitCode, r.stderr).toBe(0);
    const out = json(r);
    expect(out.topic).toBe('wallets');
    expect(out.commands).toContainEqual({ id: 'wallets list', summary: expect.any(String) });
    expect(out.commands).toContainEqual({ id: 'wallets fund', summary: expect.any(String) });
    expect(out.commands.every((c: { id: string }) => c.id.startsWith('wallets '))).toBe(true);

    const nested = json(await run('payouts', '--json'));
    expect(nested.commands.map((c: { id: string }) => c.id)).toEqual(expect.arrayContaining(['payouts list', 'payouts create', 'payouts destination list']));
  });

  it('without --json still shows the help text', async () => {
    const r = await run('wallets');
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('wallets list');
    expect(() => JSON.parse(r.stdout)).toThrow();
  });

  it("payouts destination --help describes the topic, not its list command's summary", async () => {
    const r = await run('payouts', 'destination', '--help');
    expect(r.exitCode).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe('Where payouts go: register a bank account or USDC address, list them');
  });
});

describe('a --data-dir that is a file', () => {
  for (const command of [['dev'], ['gateway', 'start']]) {
    it(`${command.join(' ')} refuses it with NOT_A_DIRECTORY naming --data-dir (exit 2), not a crash`, async () => {
      const cwd = tempDir();
      writeFileSync(join(cwd, 'agent.pem'), 'x');
      for (const dir of ['agent.pem', 'agent.pem/sub']) {
        const r = await cli([...command, '--data-dir', dir, '--port', '0', '--http-port', '0', '--json'], { configDir: cwd, cwd });
        expect(r.exitCode, r.stdout + r.stderr).toBe(2);
        const { error } = json(r);
        expect(error).toMatchObject({ code: 'NOT_A_DIRECTORY', details: { flag: '--data-dir', path: join(cwd, 'agent.pem') } });
        expect(error.message).toBe(`--data-dir: ${join(cwd, 'agent.pem')} is a file, not a directory`);
        expect(r.stderr).not.toContain('This is a bug');
      }
      expect(readFileSync(join(cwd, 'agent.pem'), 'utf8')).toBe('x');
    });
  }
});

describe('no gateway', () => {
  it('with nothing configured: exit 3, and how to get a gateway', async () => {
    const r = await run('wallets', 'list');
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toContain('error NO_GATEWAY');
    expect(r.stderr).toContain('npx agentpay dev');
  });

  it('when nothing listens: exit 3, and the hint to start one', async () => {
    const port = await closedPort();
    const r = await run('wallets', 'list', '--gateway-url', `https://127.0.0.1:${port}`, '--api-key', 'ap_w_x');
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toContain(`error GATEWAY_UNREACHABLE: cannot reach the gateway at https://127.0.0.1:${port} (ECONNREFUSED)`);
    expect(r.stderr).toContain('Try: is the gateway running? start one with: npx agentpay dev');
  });

  it('without an API key: exit 4, and how to log in', async () => {
    const r = await run('wallets', 'list', '--gateway-url', 'https://127.0.0.1:9');
    expect(r.exitCode).toBe(4);
    expect(r.stderr).toContain('error NOT_AUTHENTICATED');
    expect(r.stderr).toContain('Try: log in: agentpay login');
  });
});
