/**
 * How a real adapter's settings name their secrets (docs/rails.md § Configuration): a file of mode
 * 0600, else an environment variable; never the config file. Shared by every adapter's section
 * (./config.ts, ./usdc/config.ts).
 */
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';

export class RailsConfigError extends Error {
  constructor(readonly field: string, message: string, readonly hint?: string) {
    super(message);
  }
}

/** A secret from a file of mode 0600 (or stricter) or from the environment; the value is never put in a message. */
export function secret(field: string, file: string | undefined, envName: string, env: NodeJS.ProcessEnv, baseDir: string, adapter = 'the Stripe adapter'): string {
  if (file !== undefined) {
    const path = resolve(baseDir, file);
    let mode: number;
    try {
      mode = statSync(path).mode;
    } catch {
      throw new RailsConfigError(field, `${field}: the file ${path} cannot be read`, `create it with the secret alone, mode 0600, or unset ${field} and set ${envName}`);
    }
    if ((mode & 0o077) !== 0) throw new RailsConfigError(field, `${field}: the file ${path} is readable by others (mode ${(mode & 0o777).toString(8)})`, `chmod 600 ${path}`);
    const value = readFileSync(path, 'utf8').trim();
    if (!value) throw new RailsConfigError(field, `${field}: the file ${path} is empty`, 'put the secret in it');
    return value;
  }
  const value = env[envName]?.trim();
  if (!value) throw new RailsConfigError(field, `${adapter} needs ${envName} (or ${field} naming a 0600 file)`, `export ${envName}=…, or set rails.${field}`);
  return value;
}
