/**
 * `npx tsx bench/cli.ts`: what one `agentpay` command costs, start to exit, against a running
 * `agentpay dev` (started here, in a temp dir, with this checkout's build). Each round runs, one
 * after another: a bare `node -e 0` (the baseline: Node's own start), `agentpay --version` (oclif),
 * `agentpay wallets list --json` (a command that makes one HTTPS request) and, with --compare, the
 * same command of another build's bin/run.js (e.g. a worktree of the commit before), so that both
 * are measured in the same minutes. CPU is each child's user + system time, read as this process's
 * children's time (/proc/self/stat cutime + cstime) around a synchronous run, and covers every thread
 * of the child (V8's background compiles too). Linux only.
 *
 * Prints, per command: wall and CPU medians, and CPU as a ratio to the bare node start.
 *
 * Flags (or env BENCH_<NAME>): --rounds N (default 15), --compare PATH (another bin/run.js)
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { flagReader } from './lib/flags.js';

const here = dirname(fileURLToPath(import.meta.url));
const BIN = resolve(here, '../bin/run.js');
const { values } = parseArgs({ options: { rounds: { type: 'string' }, compare: { type: 'string' } } });
const flags = flagReader<'rounds' | 'compare'>(values);
const rounds = flags.num('rounds', 15);
const compare = flags.opt('compare', '');

const TICK_MS = 10; // getconf CLK_TCK = 100 on Linux
/** CPU ms of this process's waited-for children so far (cutime + cstime, fields 16 and 17 of /proc/self/stat) */
function childrenCpuMs(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[13]) + Number(f[14])) * TICK_MS;
}

const dir = mkdtempSync(join(tmpdir(), 'agentpay-bench-cli-'));
const env = { ...process.env, AGENTPAY_CONFIG_DIR: join(dir, 'config'), NODE_ENV: 'production' };
const dev = spawn(process.execPath, [BIN, 'dev', '--port', '0', '--http-port', '0', '--json', '--quiet'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'inherit'] });
try {
  await new Promise<void>((ok, fail) => {
    createInterface({ input: dev.stdout! }).once('line', () => ok());
    dev.once('exit', (code) => fail(new Error(`agentpay dev exited (${code}) before it was ready`)));
  });

  const commands: [string, string[]][] = [
    ['node -e 0 (baseline)', ['-e', '0']],
    ['agentpay --version', [BIN, '--version']],
    ['agentpay wallets list', [BIN, 'wallets', 'list', '--json']],
    ...(compare ? [[`${compare} wallets list`, [resolve(compare), 'wallets', 'list', '--json']] as [string, string[]]] : []),
  ];
  const samples = new Map(commands.map(([name]) => [name, { wall: [] as number[], cpu: [] as number[] }]));
  for (let round = 0; round < rounds; round++) {
    for (const [name, args] of commands) {
      const cpu0 = childrenCpuMs();
      const t0 = performance.now();
      const r = spawnSync(process.execPath, args, { cwd: dir, env, encoding: 'utf8' });
      const wall = performance.now() - t0;
      if (r.status !== 0) throw new Error(`${name} exited ${r.status}: ${r.stderr}`);
      samples.get(name)!.wall.push(wall);
      samples.get(name)!.cpu.push(childrenCpuMs() - cpu0);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const base = median(samples.get(commands[0]![0])!.cpu);
  console.log(`${rounds} rounds, load average before: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
  for (const [name] of commands) {
    const s = samples.get(name)!;
    console.log(`${name.padEnd(48)} wall ${median(s.wall).toFixed(0).padStart(5)} ms   CPU ${median(s.cpu).toFixed(0).padStart(5)} ms   CPU / node start ${(median(s.cpu) / base).toFixed(2)}x`);
  }
} finally {
  dev.kill('SIGTERM');
  await new Promise((r) => dev.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
}
