#!/usr/bin/env node
/**
 * `npm run capability:publish`: publishes this seller's capability (src/capability.js)
 * on the gateway and prints its id; set it as AGENTPAY_CAPABILITY_ID for `npm start`.
 *
 *   AGENTPAY_GATEWAY_URL=https://127.0.0.1:4402 AGENTPAY_PROVIDER_KEY=ap_p_... \
 *   AGENTPAY_CA=.agentpay/tls/ca.pem SELLER_URL=http://127.0.0.1:3000 npm run capability:publish
 *
 * Each run publishes a new capability; edit an existing one with `npx agentpay capabilities edit`.
 */
import { readFileSync } from 'node:fs';
import { AgentpayClient } from 'agentpay-sdk/client';
import { publishInput } from '../src/capability.js';

const { AGENTPAY_GATEWAY_URL, AGENTPAY_PROVIDER_KEY, AGENTPAY_CA, SELLER_URL } = process.env;
if (!AGENTPAY_GATEWAY_URL || !AGENTPAY_PROVIDER_KEY || !SELLER_URL) {
  console.error('set AGENTPAY_GATEWAY_URL, AGENTPAY_PROVIDER_KEY (a provider key) and SELLER_URL (where buyers reach this seller)');
  process.exit(2);
}
const client = new AgentpayClient({
  baseUrl: AGENTPAY_GATEWAY_URL,
  apiKey: AGENTPAY_PROVIDER_KEY,
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
