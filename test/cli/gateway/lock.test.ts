/**
 * One gateway per data dir: DATA_DIR/gateway.lock is taken with an exclusive create
 * before the gateway opens anything, so two gateways started at the same moment on one
 * fresh data dir cannot both run; a lock left by a crashed gateway does not block.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentpayClient } from '../../../packages/sdk/src/client/index.js';
import { BIN, cli, json, startGatewayProcess, removeTempDirs, tempDir, type ReadyLine } from '../helpers.js';

afterAll(removeTempDirs);
const configDir = tempDir();

const args = (dataDir: string) => ['gateway', 'start', '--mode', 'sandbox', '--port', '0', '--http-port', '0', '--data-dir', dataDir, '--log-level', 'warn', '--json'];
const start = (dataDir: string) => startGatewayProcess(args(dataDir), { configDir });

/** a pid no process has: above the kernel's pid_max (4194304 at most) */
const DEAD_PID = 99_999_999;

/**
 * `agentpay gateway start --json` as a child process: its first stdout line (the ready
 * line, or the error envelope of a refused start) and its exit.
 */
function launch(dataDir: string) {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('AGENTPAY_')) env[k] = v;
  const proc = execa(process.execPath, [BIN, ...args(dataDir)], { env: { ...env, NODE_ENV: 'production', AGENTPAY_CONFIG_DIR: configDir }, extendEnv: false, reject: false, stdin: 'ignore' });
  const firstLine = new Promise<Record<string, any>>((res, rej) => {
    createInterface({ input: proc.stdout! }).once('line', (line) => res(JSON.parse(line)));
    void proc.then((r) => rej(new Error(`exited ${r.exitCode} without a line: ${String(r.stderr)}`)));
  });
  return { proc, firstLine };
}

describe('the gateway data dir lock', () => {
  it('lets exactly one of two gateways started at once on a fresh data dir run; the other exits GATEWAY_RUNNING', async () => {
    const dataDir = join(tempDir(), 'fresh');
    const both = [launch(dataDir), launch(dataDir)];
    try {
      const lines = await Promise.all(both.map((b) => b.firstLine));
      const winner = lines.findIndex((l) => 'baseUrl' in l);
      expect(winner).not.toBe(-1);
      const loser = both[1 - winner]!;
      expect(lines[1 - winner]).toMatchObject({ error: { code: 'GATEWAY_RUNNING', message: expect.stringContaining(`a gateway is already running on ${dataDir}`) } });
      expect((await loser.proc).exitCode).toBe(1);

      const ready = lines[winner] as ReadyLine;
      expect(readFileSync(join(dataDir, 'gateway.lock'), 'utf8')).toBe(`${both[winner]!.proc.pid}\n`);
      expect(statSync(join(dataDir, 'gateway.lock')).mode & 0o777).toBe(0o600);
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
      // the certificate it serves is signed by the CA on disk
      const health = await new AgentpayClient({ gatewayUrl: ready.baseUrl, ca: readFileSync(ready.caCertPath!, 'utf8') }).platform.health();
      expect(health.status).toBe('ok');
    } finally {
      for (const b of both) b.proc.kill('SIGTERM');
      await Promise.all(both.map((b) => b.proc));
    }
    expect(existsSync(join(dataDir, 'gateway.lock'))).toBe(false);
    expect(existsSync(join(dataDir, 'gateway.json'))).toBe(false);
  });

  it('takes over the lock a crashed gateway left (its pid is dead), and refuses while a live one holds it', async () => {
    const dataDir = tempDir();
    writeFileSync(join(dataDir, 'gateway.lock'), `${DEAD_PID}\n`, { mode: 0o600 });
    const gw = await start(dataDir);
    try {
      expect(gw.ready.baseUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(readFileSync(join(dataDir, 'gateway.lock'), 'utf8')).toBe(`${gw.pid}\n`);
      const second = await cli(args(dataDir), { configDir });
      expect(second.exitCode).toBe(1);
      expect(json(second).error).toMatchObject({ code: 'GATEWAY_RUNNING', details: { pid: gw.pid, baseUrl: gw.ready.baseUrl } });
    } finally {
      expect((await gw.stop()).exitCode).toBe(0);
    }
    expect(existsSync(join(dataDir, 'gateway.lock'))).toBe(false);
  });
});
