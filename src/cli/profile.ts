/**
 * Saved profiles: $AGENTPAY_CONFIG_DIR/config.json (default ~/.config/agentpay), mode
 * 0600 because it holds API keys. `current` names the profile used when none is asked for.
 * Every change is a read-modify-write under config.json.lock, so commands run at once
 * (parallel logins in a script) never lose each other's profiles; reads need no lock
 * because the file is always replaced whole.
 */
import { closeSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { writeFileAtomic, ensurePrivateDir } from '../core/files.js';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { CliError } from './errors/index.js';
import { isAlive } from './local-gateway.js';

export interface Profile {
  baseUrl: string;
  apiKey: string;
  /** path of a CA certificate (PEM) to trust for this gateway */
  ca?: string;
  /** a local dev gateway's data dir: its current URL is read from DATA_DIR/gateway.json */
  dataDir?: string;
}

export interface ProfileFile {
  current?: string;
  profiles: Record<string, Profile>;
}

export const DEFAULT_PROFILE = 'default';

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.AGENTPAY_CONFIG_DIR || join(homedir(), '.config', 'agentpay');
}

export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(configDir(env), 'config.json');
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** config.json holds something agentpay does not understand: the person's to fix, never overwritten. */
function invalidConfig(path: string, problem: string): CliError {
  return new CliError('CONFIG_INVALID', `${path} ${problem}`, {
    // it may hold keys that exist nowhere else: fixing beats removing
    tryNext: `fix it by hand (the expected shape is in docs/cli.md, "Profiles"), or move it aside and log in again: agentpay login`,
    details: { path },
  });
}

export function loadProfiles(env: NodeJS.ProcessEnv = process.env): ProfileFile {
  const path = configPath(env);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { profiles: {} };
    throw new CliError('CONFIG_UNREADABLE', `${path} cannot be read (${code ?? (e as Error).message}); its saved profiles are kept as they are`, {
      tryNext: code === 'EISDIR'
        ? `${path} is a directory: move it aside, then log in again (agentpay login)`
        : `check that it belongs to you and is readable by you (ls -l ${path}; it should be mode 0600)`,
      details: { path, cause: code ?? null },
    });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw invalidConfig(path, `is not valid JSON: ${(e as Error).message}`);
  }
  if (!isObject(parsed)) throw invalidConfig(path, `must hold a JSON object {"current": NAME, "profiles": {NAME: {...}}}, found ${JSON.stringify(parsed)?.slice(0, 40)}`);
  const profiles = parsed.profiles ?? {};
  if (!isObject(profiles)) throw invalidConfig(path, '"profiles" must be an object of named profiles, e.g. {"default": {"baseUrl": ..., "apiKey": ...}}');
  for (const [name, p] of Object.entries(profiles)) {
    if (!isObject(p) || typeof p.baseUrl !== 'string' || typeof p.apiKey !== 'string') {
      throw invalidConfig(path, `profile ${JSON.stringify(name)} must be an object with string "baseUrl" and "apiKey"`);
    }
  }
  return { ...(typeof parsed.current === 'string' ? { current: parsed.current } : {}), profiles: profiles as Record<string, Profile> };
}

// ---- changing config.json: one process at a time ----

/** A save takes milliseconds: a lock this old was left by a process that hung or whose pid was reused. */
const LOCK_STALE_MS = 5_000;
/** Give up waiting after this (only reached if other processes keep the lock busy all along). */
const LOCK_WAIT_MS = 30_000;

const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** The lock file's content ("PID TOKEN"), or undefined when there is none. */
function readLock(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** Whether a lock was left behind: its process is gone, or it is older than any save takes. */
function isStale(path: string, content: string): boolean {
  const pid = Number(content.split(' ')[0]);
  if (Number.isInteger(pid) && pid > 0 && !isAlive(pid)) return true;
  try {
    return Date.now() - statSync(path).mtimeMs > LOCK_STALE_MS;
  } catch {
    return false; // gone meanwhile: the next attempt takes it
  }
}

/**
 * Takes `path` as an exclusive lock (O_EXCL create holding "PID TOKEN"), waiting with a short
 * backoff while another process holds it. Returns the release function.
 */
function takeLock(path: string): () => void {
  const token = `${process.pid} ${randomBytes(8).toString('hex')}\n`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      try {
        writeSync(fd, token);
      } finally {
        closeSync(fd);
      }
      return () => {
        if (readLock(path) === token) rmSync(path, { force: true });
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const held = readLock(path);
    if (held !== undefined && isStale(path, held)) {
      // remove the lock judged stale only if it is still that one: another process may have just taken over
      if (readLock(path) === held) rmSync(path, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new CliError('CONFIG_LOCKED', `${path} stayed locked for ${LOCK_WAIT_MS / 1000} s by other agentpay commands; nothing was saved`, {
        tryNext: 'retry once the other agentpay commands have finished',
        details: { path },
      });
    }
    sleepSync(Math.min(2 ** attempt, 20) + Math.random() * 5);
  }
}

/**
 * Changes config.json: `change` gets the file as it is now (read inside the lock, so no other
 * process's change is lost) and edits it; the result is written whole (atomic, 0600).
 */
function updateProfiles<T>(env: NodeJS.ProcessEnv, change: (file: ProfileFile) => T): T {
  ensurePrivateDir(configDir(env));
  const release = takeLock(`${configPath(env)}.lock`);
  try {
    const file = loadProfiles(env);
    const result = change(file);
    writeFileAtomic(configPath(env), JSON.stringify(file, null, 2) + '\n', { mode: 0o600 });
    return result;
  } finally {
    release();
  }
}

/** What saving a profile changed: the profile current before, and what was saved under the name before. */
export interface SaveOutcome {
  path: string;
  /** the current profile before, if it still existed */
  previousCurrent?: string;
  /** the profile this one replaced */
  replaced?: Profile;
}

/** Saves (or replaces) a profile and makes it the current one. */
export function saveProfile(name: string, profile: Profile, env: NodeJS.ProcessEnv = process.env): string {
  return saveCurrentProfile(name, profile, env).path;
}

/** saveProfile, also saying what it changed (read in the same locked read-modify-write). */
export function saveCurrentProfile(name: string, profile: Profile, env: NodeJS.ProcessEnv = process.env): SaveOutcome {
  const before = updateProfiles(env, (file) => {
    // a `current` naming no saved profile (edited by hand) was no profile in use
    const current = file.current !== undefined && Object.hasOwn(file.profiles, file.current) ? file.current : undefined;
    const replaced = Object.hasOwn(file.profiles, name) ? file.profiles[name] : undefined;
    file.profiles[name] = profile;
    file.current = name;
    return { current, replaced };
  });
  return { path: configPath(env), ...(before.current ? { previousCurrent: before.current } : {}), ...(before.replaced ? { replaced: before.replaced } : {}) };
}

export function useProfile(name: string, env: NodeJS.ProcessEnv = process.env): void {
  updateProfiles(env, (file) => {
    if (!Object.hasOwn(file.profiles, name)) throw profileNotFound(name, file);
    file.current = name;
  });
}

export function removeProfile(name: string, env: NodeJS.ProcessEnv = process.env): void {
  updateProfiles(env, (file) => {
    if (!Object.hasOwn(file.profiles, name)) throw profileNotFound(name, file);
    delete file.profiles[name];
    if (file.current === name) delete file.current;
  });
}

export function profileNotFound(name: string, file: ProfileFile): CliError {
  const names = Object.keys(file.profiles);
  return new CliError('PROFILE_NOT_FOUND', `no profile named ${JSON.stringify(name)}${names.length ? ` (saved: ${names.join(', ')})` : ''}`, {
    tryNext: names.length ? 'list profiles: agentpay config' : 'save one: agentpay login --profile NAME',
    details: { profile: name },
  });
}

/** A key shown without its secret part: its public prefix and last four characters. */
export function maskKey(key: string): string {
  return key.length > 16 ? `${key.slice(0, 10)}…${key.slice(-4)}` : '…';
}
