/**
 * Saved profiles: $AGENTPAY_CONFIG_DIR/config.json (default ~/.config/agentpay), mode
 * 0600 because it holds API keys. `current` names the profile used when none is asked for.
 */
import { existsSync, readFileSync } from 'node:fs';
import { writeFileAtomic, ensurePrivateDir } from '../core/files.js';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { CliError } from './errors.js';

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

export function loadProfiles(env: NodeJS.ProcessEnv = process.env): ProfileFile {
  const path = configPath(env);
  if (!existsSync(path)) return { profiles: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new CliError('CONFIG_INVALID', `${path} is not valid JSON: ${(e as Error).message}`, {
      tryNext: `fix or remove ${path}, then log in again: agentpay login`,
    });
  }
  const file = parsed as Partial<ProfileFile>;
  return { ...(typeof file.current === 'string' ? { current: file.current } : {}), profiles: file.profiles && typeof file.profiles === 'object' ? file.profiles : {} };
}

export function saveProfiles(file: ProfileFile, env: NodeJS.ProcessEnv = process.env): void {
  ensurePrivateDir(configDir(env));
  // whole or not at all after a crash, and 0600 before any key is in it
  writeFileAtomic(configPath(env), JSON.stringify(file, null, 2) + '\n', { mode: 0o600 });
}

/** Saves (or replaces) a profile and makes it the current one. */
export function saveProfile(name: string, profile: Profile, env: NodeJS.ProcessEnv = process.env): string {
  const file = loadProfiles(env);
  file.profiles[name] = profile;
  file.current = name;
  saveProfiles(file, env);
  return configPath(env);
}

export function useProfile(name: string, env: NodeJS.ProcessEnv = process.env): void {
  const file = loadProfiles(env);
  if (!file.profiles[name]) throw profileNotFound(name, file);
  file.current = name;
  saveProfiles(file, env);
}

export function removeProfile(name: string, env: NodeJS.ProcessEnv = process.env): void {
  const file = loadProfiles(env);
  if (!file.profiles[name]) throw profileNotFound(name, file);
  delete file.profiles[name];
  if (file.current === name) delete file.current;
  saveProfiles(file, env);
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
