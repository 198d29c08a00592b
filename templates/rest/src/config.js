/**
 * The seller's settings, from the environment. Every missing value is named, with where
 * to get it, so a misconfigured deployment fails at start and not at the first sale.
 */
import { readFileSync } from 'node:fs';

const HELP = {
  AGENTPAY_GATEWAY_URL: 'the gateway your capability is published on, e.g. https://127.0.0.1:4402 (npx agentpay dev env prints it)',
  AGENTPAY_API_KEY: 'a provider API key with payments:write (eval "$(npx agentpay dev env --role seller)" sets it for agentpay dev)',
  AGENTPAY_CAPABILITY_ID: 'the id printed by npm run capability:publish',
};

/**
 * The environment with old names read as the new ones: AGENTPAY_PROVIDER_KEY is the old name of
 * AGENTPAY_API_KEY (used only when AGENTPAY_API_KEY is unset), with a one-line notice on stderr.
 */
export function withOldNames(env = process.env, warn = console.warn) {
  if (env.AGENTPAY_API_KEY || !env.AGENTPAY_PROVIDER_KEY) return env;
  warn('notice: AGENTPAY_PROVIDER_KEY is the old name of AGENTPAY_API_KEY; it still works, but use AGENTPAY_API_KEY');
  return { ...env, AGENTPAY_API_KEY: env.AGENTPAY_PROVIDER_KEY };
}

export function configFromEnv(envIn = process.env, warn = console.warn) {
  const env = withOldNames(envIn, warn);
  const missing = Object.keys(HELP).filter((k) => !env[k]);
  if (missing.length) throw new Error(missing.map((k) => `${k} is not set: ${HELP[k]}`).join('\n'));
  const port = env.PORT === undefined ? 3000 : Number(env.PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be a port number from 0 to 65535; got ${JSON.stringify(env.PORT)}`);
  return {
    gatewayUrl: env.AGENTPAY_GATEWAY_URL,
    apiKey: env.AGENTPAY_API_KEY,
    capabilityId: env.AGENTPAY_CAPABILITY_ID,
    // only for a gateway with a private CA, such as agentpay dev's DATA_DIR/tls/ca.pem
    ca: env.AGENTPAY_CA ? readFileSync(env.AGENTPAY_CA, 'utf8') : undefined,
    host: env.HOST ?? '127.0.0.1',
    port,
  };
}
