/**
 * A gateway's data directory as the CLI sees it: DATA_DIR/gateway.json says where a
 * running gateway listens (written once it is ready, removed when it stops),
 * DATA_DIR/tls/ca.pem is the CA to trust, and DATA_DIR/dev-credentials.json holds a
 * sandbox gateway's dev keys. DATA_DIR/gateway.lock (the pid of the gateway holding it)
 * makes sure only one gateway at a time runs on a data dir.
 */
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { ensurePrivateDir, writeFileAtomic } from '../core/files.js';
import { dirname, join, resolve } from 'node:path';
import { readDevCredentials } from '../dev/bootstrap.js';
import { CliError, EXIT } from './errors.js';

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

function lockHolder(path: string): number | undefined {
  try {
    const pid = Number(readFileSync(path, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

function gatewayRunning(dataDir: string, pid: number | undefined): CliError {
  const file = readGatewayFile(dataDir);
  const baseUrl = file && file.pid === pid ? file.baseUrl : undefined;
  return new CliError('GATEWAY_RUNNING', `a gateway is already running on ${dataDir} (pid ${pid ?? 'unknown'}, ${baseUrl ?? 'starting'})`, {
    tryNext: `stop it first, or use another --data-dir (if no gateway runs there, remove ${lockFilePath(dataDir)})`,
    details: { pid: pid ?? null, baseUrl: baseUrl ?? null },
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
 * throws GATEWAY_RUNNING if a live gateway holds it. Exclusive creation decides between
 * two gateways starting at once; a lock left by a crashed process (its pid is dead) is
 * taken over once. Returns the release function (idempotent).
 */
export function lockGatewayDataDir(dataDir: string): () => void {
  makeDataDir(dataDir);
  const path = lockFilePath(dataDir);
  const take = () => writeFileAtomic(path, `${process.pid}\n`, { mode: 0o600, exclusive: true });
  try {
    take();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    const pid = lockHolder(path);
    // the file is always written whole, so no readable pid means someone made it by hand: keep out
    // (a lock gone by now was just released: take it)
    if (pid === undefined ? existsSync(path) : heldLocks.has(path) || (pid !== process.pid && isAlive(pid))) throw gatewayRunning(dataDir, pid);
    // a crashed holder: take over, once (a second EEXIST means another start won the race)
    rmSync(path, { force: true });
    try {
      take();
    } catch (e2) {
      if ((e2 as NodeJS.ErrnoException).code === 'EEXIST') throw gatewayRunning(dataDir, lockHolder(path));
      throw e2;
    }
  }
  heldLocks.add(path);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    heldLocks.delete(path);
    if (lockHolder(path) === process.pid) rmSync(path, { force: true });
  };
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

export function gatewayNotRunning(dataDir: string): CliError {
  return new CliError('GATEWAY_NOT_RUNNING', `no gateway is running on the data dir ${dataDir}`, {
    exit: 3,
    tryNext: `start it: npx agentpay dev --data-dir ${dataDir}`,
    details: { dataDir },
  });
}
