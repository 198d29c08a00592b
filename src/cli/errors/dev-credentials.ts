/** A dev gateway's credentials file that cannot be used, and how to get working dev keys again. */
import { dirname } from 'node:path';
import type { DevCredentialsError } from '../../gateway/dev-credentials.js';
import { CliError } from './cli-error.js';

/** DevCredentialsError as the CLI reports it: the file, and how to get working dev keys again. */
export function devCredentialsError(e: DevCredentialsError): CliError {
  const dataDir = dirname(e.path);
  const restart = `restart the gateway (npx agentpay dev --data-dir ${dataDir}): it makes new dev keys`;
  const fix = e.readError === undefined
    ? `remove it and ${restart}`
    : e.readError === 'EISDIR'
      ? `move that directory away and ${restart}`
      : `check that it belongs to you and is readable by you (ls -l ${e.path})`;
  return new CliError(e.code, e.message, {
    tryNext: `${fix}; or use another gateway and key: --gateway-url URL --api-key KEY`,
    details: { path: e.path, ...(e.readError ? { cause: e.readError } : {}) },
  });
}
