/**
 * `agentpay gateway start` and `agentpay dev` as child processes, on input a person gets wrong:
 * an empty --data-dir is refused (never the working directory), a --host that is no address of
 * this machine or does not resolve is a usage error naming --host; and `agentpay dev` restarted
 * after one of its dev keys was revoked shows a new key that works, not the revoked one.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentpayClient } from '../../../packages/sdk/src/client/index.js';
import { cli, json, removeTempDirs, startGatewayProcess, tempDir } from '../helpers.js';

afterAll(removeTempDirs);
const configDir = tempDir();

describe('--data-dir ""', () => {
  for (const command of [['gateway', 'start'], ['dev']]) {
    it(`agentpay ${command.join(' ')} refuses it with a usage error naming --data-dir, and writes nothing in the working directory`, async () => {
      const cwd = tempDir();
      const r = await cli([...command, '--port', '0', '--http-port', '0', '--data-dir', '', '--json'], { configDir, cwd });
      expect(r.exitCode, r.stderr).toBe(2);
      expect(json(r).error).toEqual({ code: 'USAGE', message: '--data-dir must not be empty: it names the directory for the database, keys and certificate', details: { flag: '--data-dir' } });
      const human = await cli([...command, '--port', '0', '--http-port', '0', '--data-dir', ''], { configDir, cwd });
      expect(human.stderr).toContain('--data-dir .agentpay');
      expect(readdirSync(cwd)).toEqual([]);
    });
  }
});

describe('gateway start --host that cannot be listened on', () => {
  it('an address this machine does not have is a usage error (exit 2) naming --host and what to give instead', async () => {
    const r = await cli(['gateway', 'start', '--host', '10.255.255.1', '--port', '0', '--http-port', '0', '--data-dir', join(tempDir(), 'gw'), '--json'], { configDir });
    expect(r.exitCode, r.stderr).toBe(2);
    const { error } = json(r);
    expect(error).toMatchObject({ code: 'USAGE', message: '--host 10.255.255.1 is not an address of this machine, so the gateway cannot listen on it', details: { flag: '--host', host: '10.255.255.1', cause: 'EADDRNOTAVAIL' } });
    const human = await cli(['gateway', 'start', '--host', '10.255.255.1', '--port', '0', '--http-port', '0', '--data-dir', join(tempDir(), 'gw')], { configDir });
    expect(human.stderr).toContain('127.0.0.1 (this machine only), 0.0.0.0 (every interface)');
    expect(human.stderr).not.toContain('bug');
  });

  it('a name that does not resolve is a usage error (exit 2) naming --host, not "cannot reach the gateway"', async () => {
    const r = await cli(['gateway', 'start', '--host', 'no-such-host.invalid', '--port', '0', '--http-port', '0', '--data-dir', join(tempDir(), 'gw'), '--json'], { configDir });
    expect(r.exitCode, r.stderr).toBe(2);
    const { error } = json(r);
    expect(error.code).toBe('USAGE');
    expect(error.message).toMatch(/^--host no-such-host\.invalid (does not resolve to an address|could not be resolved now)/);
    expect(error.details).toMatchObject({ flag: '--host', host: 'no-such-host.invalid' });
    expect(r.stdout + r.stderr).not.toContain('agentpay dev');
  });
});

describe('agentpay dev after a dev key was revoked', () => {
  it('shows a new workspace key on the next start, which works, and saves it in dev-credentials.json (0600)', async () => {
    const dataDir = join(tempDir(), 'data');
    const args = ['dev', '--json', '--port', '0', '--http-port', '0', '--data-dir', dataDir];
    const first = await startGatewayProcess(args, { configDir });
    const revoked = first.ready.workspace!.apiKey;
    try {
      const ca = readFileSync(first.ready.caCertPath!, 'utf8');
      const ws = new AgentpayClient({ gatewayUrl: first.ready.baseUrl, ca, apiKey: revoked });
      await ws.keys.revoke((await ws.auth.whoami()).key.id);
    } finally {
      await first.stop();
    }

    const again = await startGatewayProcess(args, { configDir });
    try {
      const ready = again.ready;
      expect(ready.workspace!.id).toBe(first.ready.workspace!.id);
      expect(ready.workspace!.apiKey).not.toBe(revoked);
      expect(ready.operatorKey).toBe(first.ready.operatorKey);
      const ca = readFileSync(ready.caCertPath!, 'utf8');
      const me = await new AgentpayClient({ gatewayUrl: ready.baseUrl, ca, apiKey: ready.workspace!.apiKey }).auth.whoami();
      expect(me.tenant.id).toBe(ready.workspace!.id);
      const file = join(dataDir, 'dev-credentials.json');
      expect(JSON.parse(readFileSync(file, 'utf8')).workspace).toEqual(ready.workspace);
      expect(statSync(file).mode & 0o777).toBe(0o600);
    } finally {
      expect((await again.stop()).exitCode).toBe(0);
    }
  });
});
