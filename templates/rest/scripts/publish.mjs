#!/usr/bin/env node
/**
 * `npm run capability:publish`: publishes this seller's capability (src/capability.js)
 * on the gateway and prints its id; set it as AGENTPAY_CAPABILITY_ID for `npm start`.
 *
 *   AGENTPAY_GATEWAY_URL=https://127.0.0.1:4402 AGENTPAY_API_KEY=ap_p_... \
 *   AGENTPAY_CA=.agentpay/tls/ca.pem SELLER_URL=http://127.0.0.1:3000 npm run capability:publish
 *
 * Each run publishes a new capability; edit an existing one with `npx agentpay capabilities edit`.
 */
import { readFileSync } from 'node:fs';
import { AgentpayClient } from 'agentpay-sdk/client';
import { withOldNames } from '../src/config.js';
import { publishInput } from '../src/capability.js';

const { AGENTPAY_GATEWAY_URL, AGENTPAY_API_KEY, AGENTPAY_CA, SELLER_URL } = withOldNames(process.env);
if (!AGENTPAY_GATEWAY_URL || !AGENTPAY_API_KEY || !SELLER_URL) {
  console.error('set AGENTPAY_GATEWAY_URL, AGENTPAY_API_KEY (a provider key; eval "$(npx agentpay dev env --role seller)" sets both for agentpay dev) and SELLER_URL (where buyers reach this seller)');
  process.exit(2);
}
const client = new AgentpayClient({
  gatewayUrl: AGENTPAY_GATEWAY_URL,
  apiKey: AGENTPAY_API_KEY,
  ...(AGENTPAY_CA ? { ca: readFileSync(AGENTPAY_CA, 'utf8') } : {}),
});
try {
  const { capability, version } = await client.capabilities.publish(publishInput(SELLER_URL));
  console.error(`published ${capability.name} at ${version.endpoint} for ${capability.priceMinor} ${capability.currency} minor units per call`);
  console.log(capability.id);
} catch (e) {
  console.error(`publish failed: ${e.code ?? ''} ${e.message}`);
  process.exit(1);
}
