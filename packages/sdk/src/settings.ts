/**
 * Settings read from the environment when an option is not given: the names `agentpay dev env`
 * prints (docs/configuration.md), so that after `eval "$(npx agentpay dev env --role seller)"` a
 * seller's middleware needs no options, and after `--role buyer` `createBuyer()` none. An option given
 * always wins over the variable (an explicit `undefined` counts as not given).
 *
 *   option          variable                   value
 *   gatewayUrl      AGENTPAY_GATEWAY_URL       the gateway's URL
 *   apiKey          AGENTPAY_API_KEY           the API key (a seller's provider key, a buyer's workspace key)
 *   ca              AGENTPAY_CA                a path to the CA's PEM (as `dev env` prints it), or the PEM itself
 *   walletId        AGENTPAY_WALLET_ID         the agent wallet that pays
 *   privateKeyPem   AGENTPAY_PRIVATE_KEY_FILE  a path to the agent's PKCS#8 PEM
 *   capabilityId    AGENTPAY_CAPABILITY_ID     a seller's capability (when neither capabilityId nor routes is given)
 *
 * The environment is `process.env` where there is one (Node, Bun, Deno, Workers with nodejs_compat);
 * elsewhere (a browser) nothing is read and a missing setting is named as an option. Files are read
 * through `process.getBuiltinModule` (Node 20.16+), so this module has no Node import and bundles for
 * any runtime. A setting still missing after this is refused at construction with VALIDATION_FAILED,
 * naming the option, its variable and where to get it.
 */
import { AgentpayError } from './errors.js';

/** Where unset options are read from: `process.env` by default; a record of your own; false: nowhere. */
export type SettingsEnv = Readonly<Record<string, string | undefined>> | false;

export interface EnvOption {
  /**
   * Where options not given are read from (AGENTPAY_GATEWAY_URL, AGENTPAY_API_KEY, AGENTPAY_CA, …):
   * default `process.env`; false: nowhere (every setting comes from the options).
   */
  env?: SettingsEnv;
}

export const SETTING_VARIABLES = {
  gatewayUrl: 'AGENTPAY_GATEWAY_URL',
  apiKey: 'AGENTPAY_API_KEY',
  ca: 'AGENTPAY_CA',
  walletId: 'AGENTPAY_WALLET_ID',
  privateKeyPem: 'AGENTPAY_PRIVATE_KEY_FILE',
  capabilityId: 'AGENTPAY_CAPABILITY_ID',
} as const;
export type Setting = keyof typeof SETTING_VARIABLES;

/** How to get each setting, said in a missing setting's error. */
const HOW: Record<Setting, string> = {
  gatewayUrl: 'eval "$(npx agentpay dev env)" sets it for a running agentpay dev',
  apiKey: 'eval "$(npx agentpay dev env --role seller)" sets the dev provider key (--role buyer: the workspace key)',
  ca: 'eval "$(npx agentpay dev env)" sets it for a running agentpay dev',
  walletId: 'eval "$(npx agentpay dev env --role buyer)" sets a funded-on-request dev agent wallet (agentpay wallets fund "$AGENTPAY_WALLET_ID" --amount 1000)',
  privateKeyPem: 'eval "$(npx agentpay dev env --role buyer)" sets the dev agent\'s key file',
  capabilityId: 'agentpay publish prints the id of a capability',
};

const runtimeEnv = (): Readonly<Record<string, string | undefined>> | undefined =>
  (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;

function readTextFile(path: string, variable: string): string {
  const getBuiltin = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule;
  const fs = getBuiltin?.('node:fs') as { readFileSync(p: string, enc: 'utf8'): string } | undefined;
  if (!fs) {
    throw new AgentpayError('VALIDATION_FAILED', `${variable} names a file (${path}), and this runtime cannot read files: pass the PEM text as an option instead`, { details: { field: variable } });
  }
  try {
    return fs.readFileSync(path, 'utf8');
  } catch (e) {
    throw new AgentpayError('VALIDATION_FAILED', `${variable}=${path}: cannot read the file (${(e as { code?: string }).code ?? String(e)})`, { details: { field: variable }, cause: e });
  }
}

/** One setting's value from the environment, or undefined. AGENTPAY_CA takes a path or the PEM text. */
function fromEnv(name: Setting, env: Readonly<Record<string, string | undefined>>): string | undefined {
  const variable = SETTING_VARIABLES[name];
  const raw = env[variable];
  if (raw === undefined || raw === '') return undefined;
  if (name === 'ca') return raw.includes('-----BEGIN') ? raw : readTextFile(raw, variable);
  if (name === 'privateKeyPem') return readTextFile(raw, variable);
  return raw;
}

/**
 * `opts` with each of `names` not given filled from the environment (`opts.env`, default process.env).
 * Returns a new object; `opts` is not changed.
 */
export function withEnvDefaults<T extends EnvOption & Partial<Record<Setting, unknown>>>(opts: T, names: readonly Setting[]): T {
  const env = opts.env === false ? undefined : (opts.env ?? runtimeEnv());
  if (!env) return opts;
  const out = { ...opts } as Record<string, unknown>;
  for (const name of names) {
    if (out[name] !== undefined) continue;
    const value = fromEnv(name, env);
    if (value !== undefined) out[name] = value;
  }
  return out as T;
}

/** The error for a required setting that is neither an option nor in the environment. */
export function missingSetting(who: string, name: Setting, extra = ''): AgentpayError {
  const variable = SETTING_VARIABLES[name];
  return new AgentpayError('VALIDATION_FAILED', `${who}: ${name} is missing${extra}: pass the ${name} option or set ${variable} (${HOW[name]})`, {
    details: { field: name, variable },
  });
}
