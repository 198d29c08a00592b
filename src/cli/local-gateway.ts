/**
 * A gateway's data directory as the CLI sees it: DATA_DIR/gateway.json says where a
 * running gateway listens (written once it is ready, removed when it stops),
 * DATA_DIR/tls/ca.pem is the CA to trust, and DATA_DIR/dev-credentials.json holds a
 * sandbox gateway's dev keys. DATA_DIR/gateway.lock (the pid of the gateway holding it)
 * makes sure only one gateway at a time runs on a data dir.
 */
import { closeSync, existsSync, fstatSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { ensurePrivateDir, writeFileAtomic } from '../core/files.js';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { readDevCredentials } from '../gateway/dev-credentials.js';
import { CliError, EXIT } from './errors/index.js';

export const DEV_ROLES = ['workspace', 'provider', 'operator'] as const;
export type DevRole = (typeof DEV_ROLES)[number];

export interface GatewayFile {
  baseUrl: string;
  httpUrl: string | null;
  pid: number;
}

export const gatewayFilePath = (dataDir: string) => join(dataDir, 'gateway.json');
export const lockFilePath = (dataDir: string) => join(dataDir, 'gateway.lock');
export const caPath = (dataDir: string) => join(dataDir, 'tls', 'ca.pem');
/** the data dir `agentpay dev` uses when none is given, and the CLI looks for last */
export const LOCAL_DATA_DIR = '.agentpay';

export function writeGatewayFile(dataDir: string, file: GatewayFile): void {
  writeFileAtomic(gatewayFilePath(dataDir), JSON.stringify(file) + '\n', { mode: 0o600 });
}

/** Removes gateway.json if it is this process's (a newer gateway may have replaced it). */
export function removeGatewayFile(dataDir: string, pid: number = process.pid): void {
  const f = readGatewayFile(dataDir);
  if (f && f.pid === pid) rmSync(gatewayFilePath(dataDir), { force: true });
}

export function readGatewayFile(dataDir: string): GatewayFile | undefined {
  const p = gatewayFilePath(dataDir);
  if (!existsSync(p)) return undefined;
  try {
    return JSON.parse(readFileSync(p, 'utf8')) as GatewayFile;
  } catch {
    return undefined;
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The running gateway of a data dir, if its process is still alive (a crash leaves a stale file). */
export function runningGateway(dataDir: string): GatewayFile | undefined {
  const f = readGatewayFile(dataDir);
  return f && isAlive(f.pid) ? f : undefined;
}

/** lock files this process holds: its own pid in a lock file is stale unless listed here */
const heldLocks = new Set<string>();

/** A lock file as one read saw it: its pid (undefined if it holds none) and what tells it from a newer lock. */
interface LockFile {
  pid: number | undefined;
  ino: number;
  writtenMs: number;
}

/** The lock file at `path` (one open, so that pid and identity agree), or undefined if there is none. */
function readLock(path: string): LockFile | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  try {
    const { ino, mtimeMs } = fstatSync(fd);
    const pid = Number(readFileSync(fd, 'utf8').trim());
    return { pid: Number.isInteger(pid) && pid > 0 ? pid : undefined, ino, writtenMs: mtimeMs };
  } catch (e) {
    throw Object.assign(e as Error, { path }); // a read of an open file (a directory, here) does not name it
  } finally {
    closeSync(fd);
  }
}

/** USER_HZ, the unit of a start time in /proc/PID/stat: 100 on every Linux architecture */
const CLOCK_TICKS = 100;

/**
 * Whether the live process `pid` can be the agentpay gateway that wrote a lock at `writtenMs`.
 * A pid outlives its process: after a kill -9 any new process may get it, and pid 1 of a
 * container always runs. On Linux /proc tells them apart: a process that started after the lock
 * was written did not write it, and one whose command line runs no agentpay CLI is no gateway.
 * Elsewhere, or when /proc cannot be read, any live process counts as the holder.
 */
export function mayHoldLock(pid: number, writtenMs: number): boolean {
  if (!isAlive(pid)) return false;
  if (process.platform !== 'linux') return true;
  let stat: string;
  let cmdline: string[];
  let uptimeS: number;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    uptimeS = Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== 'ENOENT'; // ENOENT: it exited meanwhile
  }
  // the fields after "(comm)", which may hold spaces itself: state is field 3, starttime field 22
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  if (fields[0] === 'Z' || fields[0] === 'X') return false; // exited, not yet reaped
  const startedMs = Date.now() - (uptimeS - Number(fields[19]) / CLOCK_TICKS) * 1000;
  // 2 s for the rounding of uptime, ticks and the file system's mtime
  if (startedMs > writtenMs + 2000) return false;
  return cmdline.some((arg) => runsAgentpay(pid, arg));
}

/** Whether `arg`, an argument of process `pid`, is an agentpay CLI: this one's script, the `agentpay` bin, or bin/run.js of the agentpay-cli package. */
function runsAgentpay(pid: number, arg: string): boolean {
  if (arg === process.argv[1] || basename(arg) === 'agentpay') return true;
  if (basename(arg) !== 'run.js') return false;
  const script = isAbsolute(arg) ? arg : join(`/proc/${pid}/cwd`, arg);
  try {
    return (JSON.parse(readFileSync(join(script, '..', '..', 'package.json'), 'utf8')) as { name?: unknown }).name === 'agentpay-cli';
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EACCES'; // another user's process: it may be
  }
}

function gatewayRunning(dataDir: string, holder: number | 'starting' | undefined): CliError {
  const lock = lockFilePath(dataDir);
  const file = readGatewayFile(dataDir);
  const baseUrl = file && file.pid === holder ? file.baseUrl : undefined;
  const message =
    holder === 'starting'
      ? `another gateway is starting on ${dataDir}: it is taking over the stale lock ${lock}`
      : holder === undefined
        ? `a gateway may be running on ${dataDir}: the lock ${lock} names no pid`
        : `a gateway is already running on ${dataDir}: the lock ${lock} names pid ${holder}, a running agentpay gateway (${baseUrl ?? 'starting'})`;
  return new CliError('GATEWAY_RUNNING', message, {
    tryNext: `stop it first, or use another --data-dir (if no gateway runs there, remove ${lock})`,
    details: { pid: typeof holder === 'number' ? holder : null, baseUrl: baseUrl ?? null },
  });
}

/** Makes the data dir (0700) if needed; a file in the way is the person's to fix, named by its flag. */
function makeDataDir(dataDir: string): void {
  try {
    ensurePrivateDir(dataDir);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code !== 'EEXIST' && err.code !== 'ENOTDIR') throw e;
    // mkdir names the path it could not make; the file in the way is it or one of its parents
    let file = dataDir;
    while (!(existsSync(file) && !statSync(file).isDirectory())) {
      if (dirname(file) === file) throw e;
      file = dirname(file);
    }
    throw new CliError('NOT_A_DIRECTORY', `--data-dir: ${file} is a file, not a directory`, {
      exit: EXIT.USAGE,
      tryNext: 'pass a directory (it is made if missing), e.g. --data-dir .agentpay',
      details: { flag: '--data-dir', path: file },
    });
  }
}

/**
 * Takes DATA_DIR/gateway.lock for this process, making the data dir (0700) if needed, or
 * throws GATEWAY_RUNNING if a gateway holds it. Exclusive creation decides between two
 * gateways starting at once; a lock whose pid is no gateway any more (it crashed, and the pid
 * may since belong to another process) is taken over. Returns the release function (idempotent).
 */
export function lockGatewayDataDir(dataDir: string): () => void {
  makeDataDir(dataDir);
  const path = lockFilePath(dataDir);
  const take = () => writeFileAtomic(path, `${process.pid}\n`, { mode: 0o600, exclusive: true });
  try {
    take();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    const lock = readLock(path);
    // the file is always written whole, so no readable pid means someone made it by hand: keep out
    if (lock && (lock.pid === undefined || heldLocks.has(path) || (lock.pid !== process.pid && mayHoldLock(lock.pid, lock.writtenMs)))) {
      throw gatewayRunning(dataDir, lock.pid);
    }
    // stale (or just released: gone)
    if (lock) takeOver(dataDir, lock);
    try {
      take();
    } catch (e2) {
      // a second EEXIST: another start took it first
      if ((e2 as NodeJS.ErrnoException).code === 'EEXIST') throw gatewayRunning(dataDir, readLock(path)?.pid);
      throw e2;
    }
  }
  heldLocks.add(path);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    heldLocks.delete(path);
    if (readLock(path)?.pid === process.pid) rmSync(path, { force: true });
  };
}

/**
 * Removes the stale lock `stale`, if it is still there. Two starts may find the same stale lock,
 * and the second must not remove the lock the first has taken since: only the start that creates
 * DATA_DIR/gateway.lock.INODE-PID.takeover (exclusively; it names this stale lock) removes it, after
 * checking that the lock is still that one. (One that crashed in between leaves the lock to remove by hand.)
 */
function takeOver(dataDir: string, stale: LockFile): void {
  const path = lockFilePath(dataDir);
  const claim = `${path}.${stale.ino}-${stale.pid}.takeover`;
  try {
    closeSync(openSync(claim, 'wx', 0o600));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw gatewayRunning(dataDir, 'starting');
    throw e;
  }
  try {
    const now = readLock(path);
    if (now && now.ino === stale.ino && now.pid === stale.pid && now.writtenMs === stale.writtenMs) rmSync(path);
  } finally {
    rmSync(claim, { force: true });
  }
}

export interface LocalConnection {
  dataDir: string;
  baseUrl?: string;
  apiKey?: string;
  ca?: string;
}

/** The connection a data dir offers for one of its dev roles; fields it cannot offer stay unset. */
export function localConnection(dataDirIn: string, as: DevRole): LocalConnection {
  const dataDir = resolve(dataDirIn);
  const creds = readDevCredentials(dataDir);
  const running = runningGateway(dataDir);
  const ca = caPath(dataDir);
  const apiKey = creds && (as === 'operator' ? creds.operatorKey : as === 'workspace' ? creds.workspace.apiKey : creds.provider.apiKey);
  return {
    dataDir,
    ...(running ? { baseUrl: running.baseUrl } : {}),
    ...(apiKey ? { apiKey } : {}),
    ...(existsSync(ca) ? { ca } : {}),
  };
}

export function isGatewayDataDir(dir: string): boolean {
  return existsSync(join(dir, 'dev-credentials.json')) || existsSync(gatewayFilePath(dir));
}

/**
 * The nearest local gateway's data dir, as git finds `.git`: ./.agentpay, else .agentpay in the
 * parent directory, and so on up. Only a gateway's data dir counts (dev-credentials.json or
 * gateway.json in it), so an unrelated directory of that name is passed over. The search stops
 * after the user's home directory when it starts inside it (a project under ~ never picks up a
 * data dir of another user or of /), else at the filesystem root. Undefined when there is none.
 */
export function findLocalDataDir(cwd: string = process.cwd(), home: string = homedir()): string | undefined {
  let dir = resolve(cwd);
  const h = resolve(home);
  const fromHome = relative(h, dir);
  const underHome = fromHome === '' || (!fromHome.startsWith('..') && !isAbsolute(fromHome));
  for (;;) {
    const candidate = join(dir, LOCAL_DATA_DIR);
    if (isGatewayDataDir(candidate)) return candidate;
    if (underHome && dir === h) return undefined;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

export function gatewayNotRunning(dataDir: string): CliError {
  return new CliError('GATEWAY_NOT_RUNNING', `no gateway is running on the data dir ${dataDir}`, {
    exit: 3,
    tryNext: `start it: npx agentpay dev --data-dir ${dataDir}`,
    details: { dataDir },
  });
}
