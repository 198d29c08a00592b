/**
 * `agentpay demo`: the whole marketplace on this machine, in one process and a temp
 * dir. A sandbox gateway (the same one `agentpay dev` runs), a sample seller with the
 * seller middleware, and a buyer agent with the buyer SDK that searches, buys three
 * calls (the third fails at the seller and is refunded), and reads back its receipts,
 * the ledger and the balances. Everything it starts is stopped before it returns, and
 * the temp dir is removed unless kept; Ctrl-C stops it all too.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateEd25519 } from '../../core/ed25519.js';
import { PLATFORM_REVENUE_WALLET_ID } from '../../domain/tenancy/tenants.js';
import { createBuyer } from 'agentpay-sdk/buyer';
import { AgentpayClient } from 'agentpay-sdk/client';
import type { LedgerEntry, Receipt } from 'agentpay-sdk/types';
import { runGateway, type LocalGateway } from '../gateway-runner.js';
import { verifyReceipt } from '../receipts-verify.js';
import { startDemoSeller, type DemoSeller } from './seller.js';
import type { Steps } from './steps.js';
import { closeAtEnd } from '../open-connections.js';

export const SEARCH_QUERY = 'weather forecast';
const PRICE = '100';
const FUNDING = '1000';

export interface DemoPurchase {
  capabilityId: string;
  name: string;
  url: string;
  status: number;
  ok: boolean;
  receiptId: string | null;
  transactionId: string | null;
  /** the seller failed after payment: the hold went back to the buyer */
  refunded: boolean;
}

export interface WalletMovement {
  walletId: string;
  /** net change, signed integer minor units */
  amountMinor: string;
  /** the ledger entries of the transaction on this wallet, in order */
  entries: Array<Pick<LedgerEntry, 'type' | 'amountMinor' | 'holdMinor'>>;
}

export interface DemoSummary {
  gateway: { baseUrl: string; dataDir: string; kept: boolean };
  seller: { url: string; providerId: string; capabilities: Array<{ id: string; name: string; priceMinor: string; endpoint: string }> };
  buyer: { walletId: string; fundedMinor: string };
  search: { query: string; results: Array<{ capabilityId: string; name: string; priceMinor: string; score: number }> };
  purchases: DemoPurchase[];
  receipts: Array<Receipt & { signatureValid: boolean }>;
  /** the first purchase, wallet by wallet: buyer −100, seller +97, platform +3 */
  movement: { transactionId: string; currency: string; buyer: WalletMovement; seller: WalletMovement; platform: WalletMovement };
  /** the failed purchase: held, then refunded, net 0 for the buyer */
  refund: { transactionId: string; buyer: WalletMovement } | null;
  balances: Record<'buyer' | 'seller' | 'platform', { walletId: string; beforeMinor: string; afterMinor: string }>;
  currency: string;
}

export interface DemoOptions {
  steps: Steps;
  /** keep the temp dir (database, keys, certificate) for a look afterwards */
  keep: boolean;
}

async function movementOf(client: AgentpayClient, walletId: string, transactionId: string): Promise<WalletMovement> {
  const entries = (await client.wallets.ledger(walletId)).filter((e) => e.transactionId === transactionId);
  const net = entries.reduce((sum, e) => sum + BigInt(e.amountMinor), 0n);
  return { walletId, amountMinor: String(net), entries: entries.map((e) => ({ type: e.type, amountMinor: e.amountMinor, holdMinor: e.holdMinor })) };
}

export async function runDemo(opts: DemoOptions): Promise<DemoSummary> {
  const { steps } = opts;
  const dataDir = mkdtempSync(join(tmpdir(), 'agentpay-demo-'));
  // what was started, stopped in reverse order whatever happens
  const running: Array<() => Promise<void>> = [];
  let cleaning: Promise<void> | undefined;
  const cleanup = () =>
    (cleaning ??= (async () => {
      for (const stop of running.splice(0).reverse()) await stop().catch(() => {});
      if (!opts.keep) rmSync(dataDir, { recursive: true, force: true });
    })());
  const onSignal = () => void cleanup().finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    steps.line(`agentpay demo: a sandbox marketplace in ${dataDir}`);
    const gw: LocalGateway = await steps.run(
      'Start a sandbox gateway',
      async () => {
        const g = await runGateway({ dataDir, port: 0, httpPort: null, tls: true, config: { mode: 'sandbox' }, devCredentials: true, logLevel: 'silent' });
        running.push(() => g.stop());
        return g;
      },
      (g) => `${g.ready.baseUrl} (fee ${g.config.feeBps / 100}%)`,
    );
    const ready = gw.ready;
    const ca = gw.gateway.tls!.ca;
    const client = (apiKey: string) => closeAtEnd(new AgentpayClient({ gatewayUrl: ready.baseUrl, apiKey, ca }));
    const provider = client(ready.provider!.apiKey);
    const workspace = client(ready.workspace!.apiKey);
    const operator = client(ready.operatorKey!); // sees every wallet, the platform's included

    const seller: DemoSeller = await steps.run(
      'Start a sample seller',
      async () => {
        const s = await startDemoSeller({ gatewayUrl: ready.baseUrl, ca, apiKey: ready.provider!.apiKey });
        running.push(() => s.close());
        return s;
      },
      (s) => `${s.url} with the seller middleware (GET /forecast, GET /alerts)`,
    );

    const caps = await steps.run(
      'Publish two capabilities',
      async () => {
        const publish = async (name: string, description: string, path: string, tags: string[]) => {
          const endpoint = `${seller.url}${path}`;
          const { capability } = await provider.capabilities.publish({ name, description, protocol: 'rest', priceMinor: PRICE, category: 'weather', endpoint, tags });
          return { id: capability.id, name: capability.name, priceMinor: capability.priceMinor, endpoint };
        };
        const forecast = await publish('City weather forecast', "Tomorrow's weather forecast for a city", '/forecast', ['weather', 'forecast']);
        const alerts = await publish('Storm alerts', 'Live storm and weather alerts for a region', '/alerts', ['weather', 'alerts']);
        seller.sell({ forecast: forecast.id, alerts: alerts.id });
        return { forecast, alerts };
      },
      (c) => `${c.forecast.name} (${c.forecast.id}) and ${c.alerts.name} (${c.alerts.id}), ${PRICE} minor units a call`,
    );

    const before = { seller: (await operator.wallets.balance(ready.provider!.walletId)).balanceMinor, platform: (await operator.wallets.balance(PLATFORM_REVENUE_WALLET_ID)).balanceMinor };
    const agent = await steps.run(
      'Create and fund an agent wallet',
      async () => {
        const pair = generateEd25519();
        const wallet = await workspace.wallets.create({ ownerType: 'agent', ownerId: 'demo-agent', publicKeyPem: pair.publicKeyPem });
        await workspace.wallets.fund(wallet.id, FUNDING);
        return { walletId: wallet.id, privateKeyPem: pair.privateKeyPem, currency: wallet.currency };
      },
      (a) => `${a.walletId} with ${FUNDING} ${a.currency} minor units (sandbox funding)`,
    );

    const results = await steps.run(`Search the market for "${SEARCH_QUERY}"`, () => workspace.discovery.search({ query: SEARCH_QUERY, maxPriceMinor: '500' }), (r) => `${r.length} found, best: ${r[0]?.capability.name ?? 'none'}`);

    const buyer = createBuyer({ env: false, gatewayUrl: ready.baseUrl, ca, walletId: agent.walletId, privateKeyPem: agent.privateKeyPem, maxPriceMinor: '150' });
    const purchases: DemoPurchase[] = [];
    const calls = [
      { cap: caps.forecast, query: '?city=Lisbon', label: 'for Lisbon' },
      { cap: caps.forecast, query: '?city=Faro', label: 'for Faro' },
      { cap: caps.alerts, query: '?region=Algarve', label: 'for the Algarve' },
    ];
    for (const { cap, query, label } of calls) {
      // the endpoint comes from discovery, as an agent would take it
      const address = results.find((r) => r.capability.id === cap.id)?.version.address;
      const url = (address?.kind === 'url' ? address.url : cap.endpoint) + query;
      const p = await steps.run(
        `Buy ${cap.name} ${label}`,
        async (): Promise<DemoPurchase> => {
          const res = await buyer.buy(url);
          const r = res.receipt;
          return { capabilityId: cap.id, name: cap.name, url, status: res.status, ok: res.ok, receiptId: r?.id ?? null, transactionId: r?.transactionId ?? null, refunded: !res.ok && r?.status === 'failed' };
        },
        (p) => (p.ok ? `HTTP ${p.status}, paid ${PRICE}, receipt ${p.receiptId}` : `HTTP ${p.status} from the seller: the call failed and was refunded, receipt ${p.receiptId}`),
      );
      purchases.push(p);
    }

    const summary = await steps.run(
      'Read the receipts, the ledger and the balances',
      async () => {
        const receipts = (await workspace.receipts.list()).receipts.filter((r) => r.consumerId === agent.walletId).reverse();
        const checked = await Promise.all(
          receipts.map(async (r) => {
            const v = await verifyReceipt({ value: r, source: r.id, key: async (keyId) => ({ publicKeyPem: (await workspace.platform.receiptKey(keyId)).publicKeyPem, from: 'gateway', baseUrl: ready.baseUrl }) });
            return { ...r, signatureValid: v.checks.signature === 'valid' };
          }),
        );
        const first = purchases.find((p) => p.ok)!;
        const failed = purchases.find((p) => p.refunded);
        const txn = first.transactionId!;
        const movement = {
          transactionId: txn,
          currency: agent.currency,
          buyer: await movementOf(operator, agent.walletId, txn),
          seller: await movementOf(operator, ready.provider!.walletId, txn),
          platform: await movementOf(operator, PLATFORM_REVENUE_WALLET_ID, txn),
        };
        const refund = failed?.transactionId ? { transactionId: failed.transactionId, buyer: await movementOf(operator, agent.walletId, failed.transactionId) } : null;
        const after = async (walletId: string) => (await operator.wallets.balance(walletId)).balanceMinor;
        const balances = {
          buyer: { walletId: agent.walletId, beforeMinor: FUNDING, afterMinor: await after(agent.walletId) },
          seller: { walletId: ready.provider!.walletId, beforeMinor: before.seller, afterMinor: await after(ready.provider!.walletId) },
          platform: { walletId: PLATFORM_REVENUE_WALLET_ID, beforeMinor: before.platform, afterMinor: await after(PLATFORM_REVENUE_WALLET_ID) },
        };
        return { receipts: checked, movement, refund, balances };
      },
      (s) => `${s.receipts.length} receipts, all signatures ${s.receipts.every((r) => r.signatureValid) ? 'valid' : 'NOT valid'}`,
    );

    const result: DemoSummary = {
      gateway: { baseUrl: ready.baseUrl, dataDir, kept: opts.keep },
      seller: {
        url: seller.url,
        providerId: ready.provider!.id,
        capabilities: [caps.forecast, caps.alerts],
      },
      buyer: { walletId: agent.walletId, fundedMinor: FUNDING },
      search: { query: SEARCH_QUERY, results: results.map((r) => ({ capabilityId: r.capability.id, name: r.capability.name, priceMinor: r.capability.priceMinor, score: r.score })) },
      purchases,
      ...summary,
      currency: agent.currency,
    };
    await steps.run('Stop the seller and the gateway', cleanup, () => (opts.keep ? `kept ${dataDir}` : 'temp dir removed'));
    return result;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await cleanup(); // after a failure too (a no-op when already done)
  }
}
