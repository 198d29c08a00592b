/**
 * DATA_DIR/gateway.lock when its pid is no gateway any more: after a kill -9 the pid may be
 * given to another process, and in a container pid 1 always runs. Such a lock is taken over
 * as a dead one is; a lock held by a running agentpay gateway still refuses, naming it; and
 * two starts that find the same stale lock never both take it over.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mayHoldLock } from '../../../src/cli/local-gateway.js';
import { cli, json, removeTempDirs, startGatewayProcess, tempDir } from '../helpers.js';

afterAll(removeTempDirs);
const configDir = tempDir();
const linux = process.platform === 'linux';

const args = (dataDir: string) => ['gateway', 'start', '--mode', 'sandbox', '--port', '0', '--http-port', '0', '--data-dir', dataDir, '--log-level', 'warn', '--json'];

/** a child process that runs until killed (`spawn` is emitted once it has exec'd) */
async function running(command: string, argv: string[], cwd?: string): Promise<ChildProcess & { pid: number }> {
  const child = spawn(command, argv, { stdio: 'ignore', ...(cwd ? { cwd } : {}) });
  await new Promise((res, rej) => child.once('spawn', res).once('error', rej));
  return child as ChildProcess & { pid: number };
}

async function stopped(child: ChildProcess): Promise<void> {
  const exited = new Promise((res) => child.once('exit', res));
  child.kill('SIGKILL');
  await exited;
}

describe('mayHoldLock (Linux)', () => {
  it.runIf(linux)('is true for a live agentpay process that started before the lock was written', async () => {
    const child = await running(process.execPath, ['-e', 'setInterval(() => {}, 1000)', 'agentpay']);
    try {
      expect(mayHoldLock(child.pid, Date.now())).toBe(true);
    } finally {
      await stopped(child);
    }
  });

  it.runIf(linux)('is false for a process that started after the lock was written (its pid was reused), agentpay or not', async () => {
    const child = await running(process.execPath, ['-e', 'setInterval(() => {}, 1000)', 'agentpay']);
    try {
      expect(mayHoldLock(child.pid, Date.now() - 60_000)).toBe(false);
    } finally {
      await stopped(child);
    }
  });

  it.runIf(linux)("recognizes bin/run.js of the agentpay-cli package wherever it is checked out (by a relative path too), not another package's", async () => {
    const pkg = (name: string) => {
      const dir = tempDir();
      mkdirSync(join(dir, 'bin'));
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name }));
      writeFileSync(join(dir, 'bin', 'run.js'), 'setInterval(() => {}, 1000);\n');
      return dir;
    };
    const agentpay = pkg('agentpay-cli');
    const other = pkg('some-other-cli');
    const children = [
      await running(process.execPath, [join(agentpay, 'bin', 'run.js')]),
      await running(process.execPath, ['bin/run.js'], agentpay),
      await running(process.execPath, [join(other, 'bin', 'run.js')]),
    ];
    try {
      expect(children.map((c) => mayHoldLock(c.pid, Date.now()))).toEqual([true, true, false]);
    } finally {
      for (const c of children) await stopped(c);
    }
  });

  it.runIf(linux)('is false for a live process that runs no agentpay CLI, and for a dead pid', async () => {
    const child = await running('sleep', ['60']);
    expect(mayHoldLock(child.pid, Date.now())).toBe(false);
    await stopped(child);
    expect(mayHoldLock(child.pid, Date.now())).toBe(false);
  });
});

describe('the gateway data dir lock naming a pid that is no gateway', () => {
  it.runIf(linux)('takes over a lock naming a live process that is no agentpay gateway, then refuses a second start naming the gateway', async () => {
    const dataDir = tempDir();
    const other = await running('sleep', ['60']);
    writeFileSync(join(dataDir, 'gateway.lock'), `${other.pid}\n`, { mode: 0o600 });
    try {
      const gw = await startGatewayProcess(args(dataDir), { configDir });
      try {
        expect(readFileSync(join(dataDir, 'gateway.lock'), 'utf8')).toBe(`${gw.pid}\n`);
        const second = await cli(args(dataDir), { configDir });
        expect(second.exitCode).toBe(1);
        expect(json(second).error).toEqual({
          code: 'GATEWAY_RUNNING',
          message: `a gateway is already running on ${dataDir}: the lock ${join(dataDir, 'gateway.lock')} names pid ${gw.pid}, a running agentpay gateway (${gw.ready.baseUrl})`,
          details: { pid: gw.pid, baseUrl: gw.ready.baseUrl },
        });
      } finally {
        expect((await gw.stop()).exitCode).toBe(0);
      }
    } finally {
      await stopped(other);
    }
    expect(existsSync(join(dataDir, 'gateway.lock'))).toBe(false);
  });

  // pid 1 is always running in a container: a lock naming it is stale like one naming `sleep` above
  // (the takeover itself is that test's; this is the decision for pid 1, without starting another gateway)
  const pid1Cmdline = linux ? readFileSync('/proc/1/cmdline', 'utf8') : '';
  it.runIf(linux && !/agentpay/.test(pid1Cmdline))('takes a lock naming pid 1 (always running in a container) as stale', () => {
    expect(mayHoldLock(1, Date.now())).toBe(false);
  });

  it('refuses while another start is taking over the same stale lock, and leaves the lock to it', async () => {
    const dataDir = tempDir();
    const lock = join(dataDir, 'gateway.lock');
    const DEAD_PID = 99_999_999;
    writeFileSync(lock, `${DEAD_PID}\n`, { mode: 0o600 });
    // the other start's claim on this stale lock, made exclusively before it removes the lock
    writeFileSync(`${lock}.${statSync(lock).ino}-${DEAD_PID}.takeover`, '');
    const r = await cli(args(dataDir), { configDir });
    expect(r.exitCode).toBe(1);
    expect(json(r).error).toMatchObject({ code: 'GATEWAY_RUNNING', message: `another gateway is starting on ${dataDir}: it is taking over the stale lock ${lock}` });
    expect(readFileSync(lock, 'utf8')).toBe(`${DEAD_PID}\n`);
  });

  it('lets exactly one of several gateways started at once on a stale lock run', async () => {
    const dataDir = tempDir();
    writeFileSync(join(dataDir, 'gateway.lock'), '99999999\n', { mode: 0o600 });
    // each prints its first line: the ready line, or the error envelope of a refused start
    const starts = await Promise.all([1, 2, 3].map(() => startGatewayProcess(args(dataDir), { configDir })));
    try {
      const ran = starts.filter((s) => 'baseUrl' in s.ready);
      expect(ran).toHaveLength(1);
      expect(readFileSync(join(dataDir, 'gateway.lock'), 'utf8')).toBe(`${ran[0]!.pid}\n`);
      for (const refused of starts.filter((s) => !('baseUrl' in s.ready))) expect(refused.ready).toMatchObject({ error: { code: 'GATEWAY_RUNNING' } });
    } finally {
      for (const gw of starts) await gw.stop();
    }
  });
});
