#!/usr/bin/env node
/**
 * `npm run e2e`: real purchases of this server's paid tools, end to end, as a buyer's agent
 * makes them.
 *
 *  1. starts a sandbox gateway: this project's `agentpay dev` on free ports, with a fresh data dir;
 *  2. publishes one capability per paid tool (src/capabilities.js) with the dev provider key;
 *  3. starts the streamable HTTP server (src/http.js) on 127.0.0.1;
 *  4. finds the tools through discovery, creates an agent wallet with a new key pair and funds it;
 *  5. checks that an unpaid call is answered with the price challenge, and that a price above the
 *     buyer's ceiling is refused before anything is signed;
 *  6. buys one tool call over HTTP with the MCP buyer (agentpay-sdk/mcp/buyer), and one over stdio
 *     (src/stdio.js launched as a child process, as an MCP host would);
 *  7. verifies each receipt on its own (signature, result hash, the gateway's copy) and checks the
 *     ledger: the buyer paid the price, the seller and the platform fee together got exactly that.
 *
 * Every process it starts is stopped by its PID at the end, also on failure. Any failed check
 * exits 1. Run it in CI next to `npm test` (scripts/ci.sh).
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { chalk, echo, fs, os, path } from 'zx';
import { createBuyer } from 'agentpay-sdk/buyer';
import { AgentpayClient } from 'agentpay-sdk/client';
import { payingCallTool, resultBytes } from 'agentpay-sdk/mcp/buyer';
import { responseHash } from 'agentpay-sdk/protocol';
import { generateKeyPair, verifyObject } from 'agentpay-sdk/signing';
import { PRICE_MINOR, publishInput } from '../src/capabilities.js';
import { paidTools, textStats, topWords } from '../src/tools.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PLATFORM_REVENUE_WALLET = 'wal_platform_revenue'; // collects the platform fee (docs/api/wallets.md)
const PRICE = BigInt(PRICE_MINOR);
const FUNDING = String(PRICE * 10n);
const DEADLINE_MS = 120_000;
const TEXT = 'Agents pay per call. Agents pay for what they use, and sellers are paid per call!';

const started = []; // {name, child, stderr}
const clients = []; // MCP clients to close (closing the stdio one stops its server)
const logs = []; // {name, stderr} of processes not in `started`
const step = (text) => echo(chalk.cyan('e2e: ') + text);

function check(condition, message, details) {
  if (!condition) throw new Error(details === undefined ? message : `${message}\n  got: ${JSON.stringify(details)}`);
}

/** The agentpay binary of this project (agentpay-cli, a devDependency: what `npx agentpay` runs), started by node itself: one process, one PID. */
function agentpayBin() {
  const pkgPath = createRequire(path.join(ROOT, 'package.json')).resolve('agentpay-cli/package.json');
  const pkg = JSON.parse(fs.readFileSync(pkgPath, 'utf8'));
  const bin = typeof pkg.bin === 'string' ? pkg.bin : pkg.bin.agentpay;
  return path.join(path.dirname(pkgPath), bin);
}

function start(name, args, env = {}) {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const entry = { name, child, stderr: '' };
  child.stderr.on('data', (d) => (entry.stderr = (entry.stderr + d).slice(-8000)));
  started.push(entry);
  return entry;
}

/** The first line the process prints on stdout; fails if it exits or stays silent first. */
function firstLine(entry, timeoutMs = 60_000) {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: entry.child.stdout });
    const timer = setTimeout(() => reject(new Error(`${entry.name} printed nothing within ${timeoutMs} ms`)), timeoutMs);
    rl.once('line', (line) => {
      clearTimeout(timer);
      rl.close();
      resolve(line);
    });
    entry.child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${entry.name} exited (${code}) before it was ready`));
    });
  });
}

/** A port that was free a moment ago: the server must know its URL before it is published. */
async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Closes the MCP clients, then SIGTERM to each started process still running, by its PID, SIGKILL after 10 s. */
async function stopAll() {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => {})));
  await Promise.all(
    started.map(async ({ child }) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      const signal = (name) => {
        try {
          process.kill(child.pid, name);
        } catch {
          // it exited in the meantime
        }
      };
      signal('SIGTERM');
      const timer = setTimeout(() => signal('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }),
  );
}

async function connect(transport) {
  const client = new Client({ name: 'e2e-buyer', version: '1.0.0' });
  clients.push(client);
  await client.connect(transport);
  return client;
}

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentpay-e2e-'));
  try {
    step(`starting agentpay dev (data dir ${dataDir})`);
    const dev = start('agentpay dev', [agentpayBin(), 'dev', '--port', '0', '--http-port', '0', '--data-dir', dataDir, '--json', '--quiet']);
    const ready = JSON.parse(await firstLine(dev));
    check(ready.baseUrl && ready.caCertPath && ready.provider?.apiKey && ready.workspace?.apiKey && ready.operatorKey, 'agentpay dev --json printed a ready line without URL, CA or dev keys', ready);
    const ca = fs.readFileSync(ready.caCertPath, 'utf8');
    const gateway = (apiKey) => new AgentpayClient({ gatewayUrl: ready.baseUrl, apiKey, ca });
    const provider = gateway(ready.provider.apiKey);
    const workspace = gateway(ready.workspace.apiKey);
    const operator = gateway(ready.operatorKey);

    const mcpUrl = `http://127.0.0.1:${await freePort()}/mcp`;
    step(`publishing ${Object.keys(paidTools).join(', ')} for ${PRICE_MINOR} minor units each at ${mcpUrl}`);
    const capabilities = {};
    for (const toolName of Object.keys(paidTools)) {
      const { capability } = await provider.capabilities.publish(publishInput(toolName, { endpoint: mcpUrl }));
      check(capability.priceMinor === PRICE_MINOR && capability.toolName === toolName, 'the published capability differs from src/capabilities.js', capability);
      capabilities[toolName] = capability.id;
    }
    const serverEnv = {
      AGENTPAY_GATEWAY_URL: ready.baseUrl,
      AGENTPAY_API_KEY: ready.provider.apiKey,
      AGENTPAY_CA: ready.caCertPath,
      AGENTPAY_CAPABILITIES: JSON.stringify(capabilities),
    };

    step('starting the streamable HTTP server');
    const server = start('http server', [path.join(ROOT, 'src/http.js')], { ...serverEnv, HOST: '127.0.0.1', PORT: new URL(mcpUrl).port });
    await firstLine(server, 30_000);

    step('finding the tools through discovery');
    const found = await workspace.discovery.search({ protocol: 'mcp', query: paidTools.text_stats.description });
    const stats = found.find((r) => r.capability.id === capabilities.text_stats);
    check(stats && stats.capability.toolName === 'text_stats' && stats.version.endpoint === mcpUrl, 'discovery does not show text_stats with its endpoint', found);

    step(`creating an agent wallet and funding it with ${FUNDING}`);
    const keys = await generateKeyPair();
    const wallet = await workspace.wallets.create({ ownerType: 'agent', ownerId: 'e2e-buyer', publicKeyPem: keys.publicKeyPem });
    await workspace.wallets.fund(wallet.id, FUNDING);
    const buyer = createBuyer({ gatewayUrl: ready.baseUrl, ca, walletId: wallet.id, privateKeyPem: keys.privateKeyPem, maxPriceMinor: PRICE_MINOR });
    const balances = async () => ({
      buyer: BigInt((await workspace.wallets.balance(wallet.id)).balanceMinor),
      seller: BigInt((await provider.wallets.balance(ready.provider.walletId)).balanceMinor),
      platform: BigInt((await operator.wallets.balance(PLATFORM_REVENUE_WALLET)).balanceMinor),
    });

    const http = await connect(new StreamableHTTPClientTransport(new URL(stats.version.endpoint)));
    const { tools } = await http.listTools();
    check(tools.find((t) => t.name === 'text_stats')?._meta?.['agentpay/capabilityId'] === capabilities.text_stats, 'tools/list does not show the capability of text_stats', tools);

    step('the free pricing tool reports the prices the gateway quotes');
    const pricing = await http.callTool({ name: 'pricing', arguments: {} });
    for (const [name, capabilityId] of Object.entries(capabilities)) {
      const listed = pricing.structuredContent?.tools?.find((t) => t.name === name);
      check(listed?.capabilityId === capabilityId && listed.priceMinor === PRICE_MINOR && listed.currency === 'USD', `the pricing tool does not report ${name} at ${PRICE_MINOR}`, pricing);
    }

    step('an unpaid call is answered with the price challenge');
    const unpaid = await http.callTool({ name: 'text_stats', arguments: { text: TEXT } });
    // our envelope rides in _meta["agentpay/error"]; structuredContent and content are x402's PaymentRequired
    const asked = unpaid._meta?.['agentpay/error'];
    const x402 = JSON.parse(unpaid.content[0].text);
    check(unpaid.isError === true && asked?.error.code === 'PAYMENT_REQUIRED' && asked.challenge.amountMinor === PRICE_MINOR, 'an unpaid call should be a tool error carrying the challenge for the price', unpaid);
    check(x402.x402Version === 2 && x402.accepts?.[0]?.scheme === 'agentpay' && x402.accepts[0].amount === PRICE_MINOR, 'an unpaid call should carry x402\'s PaymentRequired as its text', unpaid);

    if (PRICE > 0n) {
      step('a price above the buyer\'s ceiling is refused before signing');
      const before = await balances();
      const refused = await payingCallTool(http, buyer, { name: 'text_stats', arguments: { text: TEXT } }, { maxPriceMinor: String(PRICE - 1n) }).then(
        () => null,
        (e) => e,
      );
      check(refused?.code === 'PRICE_ABOVE_CLIENT_LIMIT', 'a price above maxPriceMinor should be refused with PRICE_ABOVE_CLIENT_LIMIT', refused?.message);
      const after = await balances();
      check(after.buyer === before.buyer && after.seller === before.seller && after.platform === before.platform, 'a refused purchase moved money');
    }

    /** One purchase: the expected result, a verified receipt, and the ledger movement. */
    async function buyOne(client, via, toolName, args, expected) {
      step(`buying one ${toolName} call over ${via}`);
      const before = await balances();
      const { result, receipt } = await payingCallTool(client, buyer, { name: toolName, arguments: args });
      check(!result.isError, `${toolName} answered a tool error`, result);
      check(JSON.stringify(result.structuredContent) === JSON.stringify(expected), `${toolName} answered an unexpected result`, result.structuredContent);

      check(receipt !== null, 'the paid result carries no receipt (_meta["agentpay/receipt"])');
      check(receipt.status === 'success' && receipt.consumerId === wallet.id && receipt.capabilityId === capabilities[toolName], 'the receipt is not a success for this wallet and capability', receipt);
      check(receipt.amount.amountMinor === PRICE_MINOR, 'the receipt names another amount than the price', receipt.amount);
      const { publicKeyPem } = await workspace.platform.receiptKey(receipt.signingKeyId);
      check(await verifyObject(publicKeyPem, receipt), `the receipt's signature does not verify with platform key ${receipt.signingKeyId}`);
      check(receipt.responseHash === (await responseHash(resultBytes(result))), 'the receipt does not cover the result received', receipt.responseHash);
      const stored = await workspace.receipts.get(receipt.id);
      check(JSON.stringify(stored) === JSON.stringify(receipt), "the gateway's copy of the receipt differs", stored);

      const after = await balances();
      const paid = before.buyer - after.buyer;
      const sellerGot = after.seller - before.seller;
      const fee = after.platform - before.platform;
      check(paid === PRICE, `the buyer paid ${paid}, expected exactly the price ${PRICE}`);
      check(sellerGot >= 0n && fee >= 0n && sellerGot + fee === PRICE, `seller +${sellerGot} and platform +${fee} must add up to the price ${PRICE}`);
      const entries = await workspace.wallets.ledger(wallet.id);
      const ofCall = entries.filter((e) => e.transactionId === receipt.transactionId);
      check(ofCall.reduce((sum, e) => sum + BigInt(e.amountMinor), 0n) === -PRICE, "the buyer's ledger entries of this call do not add up to minus the price", ofCall);
      echo(chalk.green(`e2e: ${toolName} over ${via}: buyer -${paid}, seller +${sellerGot}, platform +${fee}; receipt ${receipt.id} verified`));
    }

    await buyOne(http, 'streamable HTTP', 'text_stats', { text: TEXT }, textStats(TEXT));

    // as an MCP host launches it: the stdio entry point as a child process, configured by env
    const stdioTransport = new StdioClientTransport({ command: process.execPath, args: [path.join(ROOT, 'src/stdio.js')], cwd: ROOT, env: serverEnv, stderr: 'pipe' });
    const stdioLog = { name: 'stdio server', stderr: '' };
    stdioTransport.stderr.on('data', (d) => (stdioLog.stderr = (stdioLog.stderr + d).slice(-8000)));
    logs.push(stdioLog);
    const stdio = await connect(stdioTransport); // closing it (stopAll) stops the process
    await buyOne(stdio, 'stdio', 'top_words', { text: TEXT, limit: 3 }, { words: topWords(TEXT, 3) });

    let running = 0n;
    const entries = await workspace.wallets.ledger(wallet.id);
    for (const e of entries) {
      running += BigInt(e.amountMinor);
      check(BigInt(e.balanceAfterMinor) === running, `ledger entry ${e.id} has a running balance that does not add up`, e);
    }
    check(running === BigInt(FUNDING) - 2n * PRICE, "the buyer's ledger does not add up to the funding less two calls", String(running));
    echo(chalk.green('e2e: ok'));
  } finally {
    await stopAll();
    await fs.remove(dataDir);
  }
}

const deadline = setTimeout(() => {
  echo(chalk.red(`e2e: FAILED: still running after ${DEADLINE_MS} ms`));
  stopAll().finally(() => process.exit(1));
}, DEADLINE_MS);
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => stopAll().finally(() => process.exit(1)));

try {
  await main();
} catch (e) {
  process.exitCode = 1;
  echo(chalk.red(`e2e: FAILED: ${e.code ? `${e.code}: ` : ''}${e.message}`));
  for (const { name, stderr } of [...started, ...logs]) if (stderr.trim()) echo(chalk.dim(`--- ${name} stderr ---\n${stderr}`));
  await stopAll();
} finally {
  clearTimeout(deadline);
}
