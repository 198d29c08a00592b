#!/usr/bin/env node
/**
 * The MCP server over stdio (`npm run start:stdio`, or this package's bin): for an agent or
 * MCP host that launches it as a child process. Configured from the environment like
 * `npm start`; stdout is the MCP channel, so everything else goes to stderr.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createSellerPayments, paidCallsSettled } from 'agentpay-sdk/mcp/seller';
import { configFromEnv } from './config.js';
import { createMcpServer } from './server.js';

let config;
try {
  config = configFromEnv();
} catch (e) {
  console.error(e.message);
  process.exit(2);
}

const seller = createSellerPayments({ gatewayUrl: config.gatewayUrl, apiKey: config.apiKey, ca: config.ca });
await createMcpServer({ seller, capabilities: config.capabilities }).connect(new StdioServerTransport());

// The host closed our stdin (or stops us): no call can arrive any more, but calls it already sent
// may still be running, each holding the buyer's payment. Let them finish and settle with the
// gateway (bounded by the tool time limit) before exiting; a call cut off here would stay held
// until the gateway releases it, 15 minutes later.
let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  const settled = await paidCallsSettled(seller);
  if (!settled) console.error('exiting with paid calls still running: the gateway refunds them after 15 minutes');
  process.exit(0);
}
process.stdin.once('end', stop);
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, stop);
