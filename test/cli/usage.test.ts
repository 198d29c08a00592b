/** The CLI without a gateway: help, usage errors, exit codes and next steps. */
import { createServer } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { cli, json, removeTempDirs, tempDir } from './helpers.js';

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
    const r = await run('wallets', 'create', '--base-url', 'https://127.0.0.1:9', '--api-key', 'ap_w_x');
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('error USAGE: --owner-type is required (there is no terminal to ask on)');
    expect(r.stderr).toContain('Try: pass --owner-type <agent|workspace>');
  });

  it('an agent wallet without a key is refused before any request', async () => {
    const r = await run('wallets', 'create', '--owner-type', 'agent', '--owner-id', 'a', '--base-url', 'https://127.0.0.1:9', '--api-key', 'ap_w_x');
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('--key-file');
  });

  it('an unknown flag is exit 2; with --json the error is the envelope on stdout', async () => {
    const r = await run('wallets', 'list', '--nope');
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/^error USAGE: /);
    const j = await run('wallets', 'list', '--nope', '--json');
    expect(j.exitCode).toBe(2);
    expect(json(j)).toEqual({ error: { code: 'USAGE', message: expect.stringContaining('--nope'), details: {} } });
  });
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
    const r = await run('wallets', 'list', '--base-url', `https://127.0.0.1:${port}`, '--api-key', 'ap_w_x');
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toContain(`error GATEWAY_UNREACHABLE: cannot reach the gateway at https://127.0.0.1:${port} (ECONNREFUSED)`);
    expect(r.stderr).toContain('Try: is the gateway running? start one with: npx agentpay dev');
  });

  it('without an API key: exit 4, and how to log in', async () => {
    const r = await run('wallets', 'list', '--base-url', 'https://127.0.0.1:9');
    expect(r.exitCode).toBe(4);
    expect(r.stderr).toContain('error NOT_AUTHENTICATED');
    expect(r.stderr).toContain('Try: log in: agentpay login');
  });
});
