/**
 * oclif's command manifest (`oclif.manifest.json` at the package root).
 *
 * Without it oclif imports every command module on every run to learn the command ids,
 * flags and descriptions: the gateway, fastify, drizzle, zod and the MCP SDK, about 0.6 s of
 * CPU before `agentpay --version` prints anything. With it a run imports only the command
 * it runs. The manifest is derived from dist/, so it is rebuilt whenever dist/ is newer
 * (`isManifestStale`), by bin/run.js, `npm run build` and the tests' global setup.
 */
import { Plugin } from '@oclif/core';
import { renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const MANIFEST_FILE = 'oclif.manifest.json';
/** tsc rewrites this on every build that emits, so it dates dist/ as a whole */
const BUILD_STAMP = join('dist', '.tsbuildinfo');

function mtime(path: string): number | undefined {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}

/**
 * True when the manifest is missing or older than the last build. A package installed
 * without the build stamp keeps the manifest it was published with.
 */
export function isManifestStale(root: string): boolean {
  const manifest = mtime(join(root, MANIFEST_FILE));
  if (manifest === undefined) return true;
  const built = mtime(join(root, BUILD_STAMP));
  return built !== undefined && built > manifest;
}

/** Builds the manifest from the compiled commands (this imports them all) and returns it. */
export async function buildManifest(root: string): Promise<{ commands: Record<string, unknown>; version: string }> {
  const plugin = new Plugin({ root, type: 'core', ignoreManifest: true, errorOnManifestCreate: true });
  await plugin.load();
  return plugin.manifest as { commands: Record<string, unknown>; version: string };
}

/**
 * Writes the manifest atomically (a temporary file renamed over it), so CLI runs started at
 * the same moment read the old manifest or the new one, never half of one.
 */
export async function writeManifest(root: string): Promise<number> {
  const manifest = await buildManifest(root);
  const target = join(root, MANIFEST_FILE);
  const tmp = `${target}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(manifest));
  renameSync(tmp, target);
  return Object.keys(manifest.commands).length;
}
