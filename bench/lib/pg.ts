/**
 * PostgreSQL for the benches: a fresh database with a random name on the server of the URL a
 * bench is given (`--database`), dropped afterwards, and what the database server spent on it.
 *
 * The server's CPU: the PostgreSQL backends serving the bench's database (their pids from
 * pg_stat_activity, where datname is the bench's database), their user + system time read from
 * /proc/<pid>/stat (fields 14 and 15, in clock ticks of 10 ms) at the start and the end of a
 * phase. A backend that appears during the phase counts from zero; one that exits during it loses
 * what it spent since the start (the gateways' pools keep their connections while busy, so under
 * load none does). Background processes (WAL writer, checkpointer) are not counted: they serve
 * every database of the server, and other engineers' tests share it. pg_stat_statements is not
 * loaded on this project's servers (it needs shared_preload_libraries and a restart), so round
 * trips are counted in the gateway (bench/gateway.ts counts every query its driver sends) and
 * commits by the server (pg_stat_database.xact_commit of the bench's database).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';

export interface BenchDatabase {
  /** the URL of the fresh database (the given one with another database name) */
  url: string;
  name: string;
  drop(): Promise<void>;
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** A fresh database on the server of `url` (created from its `postgres` database). */
export async function createBenchDatabase(url: string): Promise<BenchDatabase> {
  const name = `agentpay_bench_${randomBytes(6).toString('hex')}`;
  const adminUrl = withDatabase(url, 'postgres');
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  return {
    url: withDatabase(url, name),
    name,
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

const TICK_MS = 10; // getconf CLK_TCK = 100 on Linux

/** user + system CPU ms of a process so far, or undefined if it is gone (or not Linux). */
function processCpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the command may hold spaces and parentheses: fields count from the last ')'
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * TICK_MS; // utime, stime: fields 14 and 15
  } catch {
    return undefined;
  }
}

export interface DbSample {
  cpuMsByPid: Map<number, number>;
  commits: number;
  rollbacks: number;
}

export interface DbUsage {
  /** CPU ms of the backends serving the bench's database over the phase */
  cpuMs: number;
  backends: number;
  /** transactions the server committed / rolled back in the bench's database over the phase */
  commits: number;
  rollbacks: number;
}

/** Reads the database server's counters for one database, through a connection of its own (to `postgres`). */
export class DbMeter {
  private constructor(private readonly client: pg.Client, private readonly name: string) {}

  static async open(db: BenchDatabase): Promise<DbMeter> {
    const client = new pg.Client({ connectionString: withDatabase(db.url, 'postgres') });
    await client.connect();
    return new DbMeter(client, db.name);
  }

  async sample(): Promise<DbSample> {
    // pg_stat_database is refreshed as backends report (at most every 0.5 s while busy and at idle): a snapshot per call
    await this.client.query('SELECT pg_stat_clear_snapshot()');
    const pids = await this.client.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'", [this.name]);
    const cpuMsByPid = new Map<number, number>();
    for (const { pid } of pids.rows) {
      const ms = processCpuMs(pid);
      if (ms !== undefined) cpuMsByPid.set(pid, ms);
    }
    const st = await this.client.query<{ c: string; r: string }>('SELECT xact_commit AS c, xact_rollback AS r FROM pg_stat_database WHERE datname = $1', [this.name]);
    return { cpuMsByPid, commits: Number(st.rows[0]?.c ?? 0), rollbacks: Number(st.rows[0]?.r ?? 0) };
  }

  /** What the server spent between `before` and now. */
  async since(before: DbSample): Promise<DbUsage> {
    const after = await this.sample();
    let cpuMs = 0;
    for (const [pid, ms] of after.cpuMsByPid) cpuMs += ms - (before.cpuMsByPid.get(pid) ?? 0);
    return { cpuMs, backends: after.cpuMsByPid.size, commits: after.commits - before.commits, rollbacks: after.rollbacks - before.rollbacks };
  }

  async close(): Promise<void> {
    await this.client.end();
  }
}
