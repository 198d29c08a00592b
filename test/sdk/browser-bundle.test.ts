/**
 * The SDK in a browser (issue 17 part 1): its "." entry (client, buyer, signing, protocol) bundled
 * by a real bundler (esbuild, platform browser, as a web app would) and loaded in headless
 * Chromium (Debian's `chromium`, driven by playwright-core). In the page: a key pair is generated,
 * an object signed and verified, a real 402 challenge fetched cross-origin from a seller (the
 * web-standard handler on @hono/node-server, CORS on) and parsed, and one paid call made by the
 * SDK's buyer from the page, whose money the test then follows in the ledger.
 *
 * The bundles must not import anything from Node (`node:*`): the browser entry, and the
 * web-standard seller (`seller/web`, for Workers and Deno) built for the browser and for the
 * neutral platform.
 *
 * The buyer's one gateway request from the page, the platform's public receipt key, goes straight to
 * the gateway: its public key routes allow any origin (the other routes answer no CORS: they are for servers).
 * Without /usr/bin/chromium the browser part is skipped with a message, except under CI.
 */
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve, type ServerType } from '@hono/node-server';
import { build, type Metafile } from 'esbuild';
import type { Page } from 'playwright-core';
import { CHROMIUM, openPage } from '../helpers/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paidHandler } from '../../packages/sdk/src/seller/web.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectLedgerConsistent, fundedAgent, platformRevenue, publish, sha256 } from '../e2e/helpers.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SDK = join(ROOT, 'packages/sdk');
const skipBrowser = !existsSync(CHROMIUM) && !process.env.CI;
if (skipBrowser) {
  process.stderr.write(`[browser-bundle test] SKIPPED the browser part: ${CHROMIUM} is missing (install it: apt-get install -y chromium). Under CI (env CI set) it fails instead.\n`);
}

/** A bundle as a user's bundler makes it: the package by name, through its package.json. */
async function bundle(entry: string, platform: 'browser' | 'neutral') {
  const result = await build({
    stdin: { contents: entry, resolveDir: SDK, loader: 'ts' },
    bundle: true,
    platform,
    format: 'esm',
    target: 'es2022',
    write: false,
    metafile: true,
    logLevel: 'silent',
    // the sources, as the dist would be: the package's own condition (dist may be stale in a checkout)
    conditions: ['agentpay-source', ...(platform === 'neutral' ? ['worker', 'import', 'default'] : [])],
    mainFields: platform === 'neutral' ? ['module', 'main'] : undefined,
  });
  return { text: result.outputFiles[0]!.text, metafile: result.metafile };
}

/** Every import the bundle left to its runtime, and every Node module it took in. */
function nodeTraces(b: { text: string; metafile: Metafile }): string[] {
  const external = Object.values(b.metafile.outputs).flatMap((o) => o.imports.map((i) => i.path));
  const inputs = Object.keys(b.metafile.inputs).filter((p) => /^node:|node_modules\/(undici|ws)\//.test(p));
  const inText = b.text.match(/(?:from\s*|import\s*\(\s*|require\s*\(\s*)["']node:[^"']+["']/g) ?? [];
  return [...external, ...inputs, ...inText];
}

describe('the SDK bundled for browsers and edge runtimes', () => {
  it('bundles the "." entry for the browser with no node: import and no Node-only module', async () => {
    const b = await bundle("export * from 'agentpay-sdk';", 'browser');
    expect(nodeTraces(b)).toEqual([]);
    // undici (the Node transport) is loaded only on Node, by a name bundlers do not follow
    expect(Object.keys(b.metafile.inputs).filter((p) => p.includes('undici'))).toEqual([]);
    expect(b.text).toContain('createBuyer');
  });

  it('bundles the web-standard seller for the browser and the neutral platform (Workers, Deno) with no node: import', async () => {
    for (const platform of ['browser', 'neutral'] as const) {
      const b = await bundle("export * from 'agentpay-sdk/seller/web';", platform);
      expect(nodeTraces(b)).toEqual([]);
      expect(b.text).toContain('paidHandler');
    }
  });
});

describe.skipIf(skipBrowser)('the SDK in headless Chromium', () => {
  let t: TestGateway;
  let capabilityId: string;
  let seller: ServerType;
  let sellerUrl: string;
  let pageServer: http.Server;
  let pageUrl: string;
  let browser: Awaited<ReturnType<typeof openPage>> | undefined;
  let page: Page;
  let pageErrors: string[] = [];
  let handled = 0;

  beforeAll(async () => {
    t = await startTestGateway();
    capabilityId = await publish(t, '100');
    // the seller: the web-standard handler as is, on @hono/node-server, CORS open to any origin
    const handler = paidHandler({ gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, capabilityId, cors: { origin: '*' }, onError: () => {} }, async () => {
      handled++;
      return Response.json({ city: 'Porto', sunny: true });
    });
    await new Promise<void>((r) => {
      seller = serve({ fetch: handler, hostname: '127.0.0.1', port: 0 }, () => r());
    });
    sellerUrl = `http://127.0.0.1:${(seller.address() as AddressInfo).port}`;

    // the page, from another origin: the seller is called cross-origin
    const sdk = (await bundle("export * from 'agentpay-sdk';", 'browser')).text;
    pageServer = http.createServer((req, res) => {
      if (req.url === '/sdk.js') {
        res.writeHead(200, { 'content-type': 'text/javascript' }).end(sdk);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>sdk</title><script type="module">import * as sdk from "/sdk.js"; window.sdk = sdk; window.sdkReady = true;</script>');
    });
    await new Promise<void>((r) => pageServer.listen(0, '127.0.0.1', r));
    pageUrl = `http://localhost:${(pageServer.address() as AddressInfo).port}/`;

    // the page reads the platform's receipt key straight from the gateway: its public key routes allow any origin
    browser = await openPage(pageUrl, 'sdkReady');
    ({ page, errors: pageErrors } = browser);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise((r) => pageServer?.close(r));
    await new Promise((r) => seller?.close(r));
    await t?.close();
  });

  type Sdk = typeof import('../../packages/sdk/src/index.js');

  it('generates a key pair, signs an object and verifies it (and refuses it altered) in the page', async () => {
    const out = await page.evaluate(async () => {
      const sdk = (window as unknown as { sdk: Sdk }).sdk;
      const keys = await sdk.generateKeyPair();
      const obj: Record<string, unknown> = { amountMinor: '100', currency: 'USD', nonce: 'n-1' };
      const signature = await sdk.signObject(keys.privateKeyPem, obj);
      const signed = { ...obj, signature };
      return {
        pem: keys.publicKeyPem,
        good: await sdk.verifyObject(keys.publicKeyPem, signed),
        altered: await sdk.verifyObject(keys.publicKeyPem, { ...signed, amountMinor: '1' }),
        nodeGlobals: typeof (globalThis as { process?: unknown }).process + typeof (globalThis as { Buffer?: unknown }).Buffer,
      };
    });
    expect(out.pem).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    expect(out.good).toBe(true);
    expect(out.altered).toBe(false);
    expect(out.nodeGlobals).toBe('undefinedundefined'); // a real browser page: no Node to lean on
    expect(pageErrors).toEqual([]);
  });

  it('fetches a real 402 cross-origin and parses its challenge with the SDK', async () => {
    const out = await page.evaluate(async (url) => {
      const sdk = (window as unknown as { sdk: Sdk }).sdk;
      const res = await fetch(url);
      const body = (await res.json()) as { error: { code: string }; challenge: unknown };
      return { status: res.status, code: body.error.code, isChallenge: sdk.isPriceChallenge(body.challenge), challenge: body.challenge as Record<string, string> };
    }, `${sellerUrl}/forecast`);
    expect(out).toMatchObject({ status: 402, code: 'PAYMENT_REQUIRED', isChallenge: true });
    expect(out.challenge).toMatchObject({ capabilityId, amountMinor: '100', currency: 'USD', payTo: t.creds.provider.walletId });
    expect(handled).toBe(0);
  });

  it('makes a paid call from the page with the SDK buyer: x-payment through the preflight, the receipt read, 100 paid as 97/3', async () => {
    const a = await fundedAgent(t, '1000');
    const sellerBalance = async () => BigInt((await t.provider.wallets.balance(t.creds.provider.walletId)).balanceMinor);
    const [sellerBefore, platformBefore] = [await sellerBalance(), await platformRevenue(t)];
    const out = await page.evaluate(async ({ url, gatewayUrl, walletId, privateKeyPem }) => {
      const sdk = (window as unknown as { sdk: Sdk }).sdk;
      const buyer = sdk.createBuyer({ gatewayUrl, walletId, privateKeyPem });
      const res = await buyer.fetch(url);
      return { status: res.status, body: await res.text(), receipt: res.receipt, header: res.headers.get(sdk.RECEIPT_HEADER) };
    }, { url: `${sellerUrl}/forecast`, gatewayUrl: t.baseUrl, walletId: a.walletId, privateKeyPem: a.privateKeyPem });
    expect(out.status).toBe(200);
    expect(JSON.parse(out.body)).toEqual({ city: 'Porto', sunny: true });
    // the page could read the exposed receipt header, and the buyer verified it
    expect(out.header).toBeTruthy();
    expect(out.receipt).toMatchObject({ status: 'success', consumerId: a.walletId, capabilityId, responseHash: sha256(out.body), amount: { amountMinor: '100', currency: 'USD' } });
    expect(handled).toBe(1);
    expect((await t.workspace.wallets.balance(a.walletId)).balanceMinor).toBe('900');
    expect((await sellerBalance()) - sellerBefore).toBe(97n);
    expect((await platformRevenue(t)) - platformBefore).toBe(3n);
    await expectLedgerConsistent(t.workspace, a.walletId);
    expect(pageErrors).toEqual([]);
  });
});
