#!/usr/bin/env node
/**
 * The MCP server over stdio (`npm run start:stdio`, or this package's bin): for an agent or
 * MCP host that launches it as a child process. Configured from the environment like
 * `npm start`; stdout is the MCP channel, so everything else goes to stderr.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createSellerPayments } from 'agentpay/mcp/seller';
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
// the host closed our stdin: every answered call is already settled with the gateway
process.stdin.once('end', () => process.exit(0));
