#!/usr/bin/env node
/**
 * `npm run e2e`: one real purchase from this seller, end to end, as a buyer's agent makes it.
 *
 *  1. starts a sandbox gateway: this project's `agentpay dev` on free ports, with a fresh data dir;
 *  2. publishes this seller's capability (src/capability.js) with the dev provider key;
 *  3. starts the seller (src/server.js) on 127.0.0.1;
 *  4. creates an agent wallet with a new key pair in the dev workspace and funds it;
 *  5. buys one call with the buyer client (agentpay-sdk/buyer);
 *  6. verifies the receipt on its own (signature, response hash, the gateway's copy) and checks the
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
import { chalk, echo, fs, os, path } from 'zx';
import { createBuyer } from 'agentpay-sdk/buyer';
import { AgentpayClient } from 'agentpay-sdk/client';
import { responseHash } from 'agentpay-sdk/protocol';
import { generateKeyPair, verifyObject } from 'agentpay-sdk/signing';
import { capability, publishInput } from '../src/capability.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PLATFORM_REVENUE_WALLET = 'wal_platform_revenue'; // collects the platform fee (docs/api/wallets.md)
const FUNDING = String(BigInt(capability.priceMinor) * 10n);
const DEADLINE_MS = 120_000;

const started = []; // {name, child, stderr}
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

/** A port that was free a moment ago: the seller must know its URL before it is published. */
async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** SIGTERM to each started process still running, by its PID, SIGKILL after 10 s; waits until all have exited. */
async function stopAll() {
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

async function balance(client, walletId) {
  return BigInt((await client.wallets.balance(walletId)).balanceMinor);
}

async function main() {
  const price = BigInt(capability.priceMinor);
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

    const sellerUrl = `http://127.0.0.1:${await freePort()}`;
    step(`publishing "${capability.name}" for ${capability.priceMinor} minor units at ${sellerUrl}`);
    const { capability: published, version } = await provider.capabilities.publish(publishInput(sellerUrl));
    check(published.priceMinor === capability.priceMinor, 'the published price differs from src/capability.js', published);

    step('starting the seller');
    const seller = start('seller', [path.join(ROOT, 'src/server.js')], {
      AGENTPAY_GATEWAY_URL: ready.baseUrl,
      AGENTPAY_API_KEY: ready.provider.apiKey,
      AGENTPAY_CA: ready.caCertPath,
      AGENTPAY_CAPABILITY_ID: published.id,
      HOST: '127.0.0.1',
      PORT: new URL(sellerUrl).port,
    });
    await firstLine(seller, 30_000);
    const health = await fetch(`${sellerUrl}/health`);
    check(health.status === 200, `GET /health answered ${health.status}, expected 200 (free)`);
    const unpaid = await fetch(version.endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"text":"hello"}' });
    const unpaidBody = await unpaid.json();
    check(unpaid.status === 402 && unpaidBody.challenge?.amountMinor === capability.priceMinor, 'an unpaid call should be answered 402 with a challenge for the price', { status: unpaid.status, body: unpaidBody });

    step(`creating an agent wallet and funding it with ${FUNDING}`);
    const keys = await generateKeyPair();
    const wallet = await workspace.wallets.create({ ownerType: 'agent', ownerId: 'e2e-buyer', publicKeyPem: keys.publicKeyPem });
    await workspace.wallets.fund(wallet.id, FUNDING);
    const before = {
      buyer: await balance(workspace, wallet.id),
      seller: await balance(provider, ready.provider.walletId),
      platform: await balance(operator, PLATFORM_REVENUE_WALLET),
    };
    check(before.buyer === BigInt(FUNDING), 'the funded wallet does not hold the funding', String(before.buyer));

    const buyer = createBuyer({ gatewayUrl: ready.baseUrl, ca, walletId: wallet.id, privateKeyPem: keys.privateKeyPem, maxPriceMinor: capability.priceMinor });
    const post = (body) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

    step('a malformed request is refused before any payment');
    const malformed = await buyer.fetch(version.endpoint, post({ text: 42 }));
    check(malformed.status === 400 && malformed.receipt === null, 'a body that fails the schema should be answered 400 without a payment', malformed.status);

    step(`buying one call of ${version.endpoint}`);
    const res = await buyer.fetch(version.endpoint, post({ text: 'agents pay per call for what they use and nothing more', maxWords: 4 }));
    const bytes = new Uint8Array(await res.arrayBuffer());
    const body = JSON.parse(new TextDecoder().decode(bytes));
    check(res.status === 200, `the paid call answered ${res.status}`, body);
    check(body.summary === 'agents pay per call', 'the paid call answered an unexpected body', body);

    step('verifying the receipt');
    const receipt = res.receipt;
    check(receipt !== null, 'the paid response carries no receipt (x-service-receipt)');
    check(receipt.status === 'success' && receipt.consumerId === wallet.id && receipt.capabilityId === published.id, 'the receipt is not a success for this wallet and capability', receipt);
    check(receipt.amount.amountMinor === capability.priceMinor, 'the receipt names another amount than the price', receipt.amount);
    const { publicKeyPem } = await workspace.platform.receiptKey(receipt.signingKeyId);
    check(await verifyObject(publicKeyPem, receipt), `the receipt's signature does not verify with platform key ${receipt.signingKeyId}`);
    check(receipt.responseHash === (await responseHash(bytes)), 'the receipt does not cover the bytes received', receipt.responseHash);
    const stored = await workspace.receipts.get(receipt.id);
    check(JSON.stringify(stored) === JSON.stringify(receipt), "the gateway's copy of the receipt differs", stored);

    step('checking the ledger');
    const after = {
      buyer: await balance(workspace, wallet.id),
      seller: await balance(provider, ready.provider.walletId),
      platform: await balance(operator, PLATFORM_REVENUE_WALLET),
    };
    const paid = before.buyer - after.buyer;
    const sellerGot = after.seller - before.seller;
    const fee = after.platform - before.platform;
    check(paid === price, `the buyer paid ${paid}, expected exactly the price ${price}`);
    check(sellerGot > 0n && fee >= 0n && sellerGot + fee === price, `seller +${sellerGot} and platform +${fee} must add up to the price ${price}`);
    const entries = await workspace.wallets.ledger(wallet.id);
    const ofCall = entries.filter((e) => e.transactionId === receipt.transactionId);
    check(ofCall.reduce((sum, e) => sum + BigInt(e.amountMinor), 0n) === -price, "the buyer's ledger entries of this call do not add up to minus the price", ofCall);
    let running = 0n;
    for (const e of entries) {
      running += BigInt(e.amountMinor);
      check(BigInt(e.balanceAfterMinor) === running, `ledger entry ${e.id} has a running balance that does not add up`, e);
    }
    check(running === after.buyer, "the buyer's ledger does not add up to its balance", { running: String(running), balance: String(after.buyer) });

    echo(chalk.green(`e2e: ok. buyer -${paid}, seller +${sellerGot}, platform +${fee}; receipt ${receipt.id} verified`));
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
  for (const { name, stderr } of started) if (stderr.trim()) echo(chalk.dim(`--- ${name} stderr ---\n${stderr}`));
  await stopAll();
} finally {
  clearTimeout(deadline);
}
