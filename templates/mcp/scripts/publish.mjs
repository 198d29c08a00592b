#!/usr/bin/env node
/**
 * `npm run capabilities:publish`: publishes one capability per paid tool (src/capabilities.js)
 * and prints their ids as JSON; set that as AGENTPAY_CAPABILITIES for `npm start`.
 *
 *   AGENTPAY_GATEWAY_URL=https://127.0.0.1:4402 AGENTPAY_API_KEY=ap_p_... AGENTPAY_CA=.agentpay/tls/ca.pem \
 *   MCP_URL=http://127.0.0.1:3000/mcp npm run -s capabilities:publish
 *
 * With `-- --package` instead of MCP_URL, the capabilities get this project's package address
 * (`npx -y <name>@<version>` from package.json): buyers run the stdio server themselves, so the
 * package must be on the npm registry at that version. Each run publishes new capabilities; edit
 * existing ones with `npx agentpay capabilities edit`.
 */
import { readFileSync } from 'node:fs';
import { AgentpayClient } from 'agentpay-sdk/client';
import { withOldNames } from '../src/config.js';
import { packageAddress, publishInput } from '../src/capabilities.js';
import { paidTools } from '../src/tools.js';

const { AGENTPAY_GATEWAY_URL, AGENTPAY_API_KEY, AGENTPAY_CA, MCP_URL } = withOldNames(process.env);
const asPackage = process.argv.includes('--package');
if (!AGENTPAY_GATEWAY_URL || !AGENTPAY_API_KEY || (!MCP_URL && !asPackage)) {
  console.error('set AGENTPAY_GATEWAY_URL, AGENTPAY_API_KEY (a provider key; eval "$(npx agentpay dev env --role seller)" sets both for agentpay dev), and MCP_URL (where buyers reach POST /mcp) or pass --package');
  process.exit(2);
}
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const where = asPackage ? { address: packageAddress(pkg.name, pkg.version) } : { endpoint: MCP_URL };
const client = new AgentpayClient({
  gatewayUrl: AGENTPAY_GATEWAY_URL,
  apiKey: AGENTPAY_API_KEY,
  ...(AGENTPAY_CA ? { ca: readFileSync(AGENTPAY_CA, 'utf8') } : {}),
});
try {
  const ids = {};
  for (const toolName of Object.keys(paidTools)) {
    const { capability } = await client.capabilities.publish(publishInput(toolName, where));
    console.error(`published ${capability.name} (${capability.id}) for ${capability.priceMinor} ${capability.currency} minor units per call`);
    ids[toolName] = capability.id;
  }
  console.log(JSON.stringify(ids));
} catch (e) {
  console.error(`publish failed: ${e.code ?? ''} ${e.message}`);
  process.exit(1);
}
