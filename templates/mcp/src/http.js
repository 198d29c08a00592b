/**
 * `npm start`: the MCP server over streamable HTTP at http://HOST:PORT/mcp, configured from
 * the environment (src/config.js). Prints one line with the endpoint once it listens;
 * SIGINT/SIGTERM close it.
 */
import { createSellerPayments } from 'agentpay-sdk/mcp/seller';
import { configFromEnv } from './config.js';
import { createHttpServer } from './server.js';

let config;
try {
  config = configFromEnv();
} catch (e) {
  console.error(e.message);
  process.exit(2);
}

const seller = createSellerPayments({ gatewayUrl: config.gatewayUrl, apiKey: config.apiKey, ca: config.ca });
const server = createHttpServer({ seller, capabilities: config.capabilities });
server.listen(config.port, config.host, () => {
  const { port } = server.address();
  console.log(`{{name}} MCP endpoint: http://${config.host}:${port}/mcp`);
});

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    server.closeIdleConnections();
    server.close(() => process.exit(0));
  });
}
