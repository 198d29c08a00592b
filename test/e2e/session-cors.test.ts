/**
 * Payment sessions from a browser page (CORS): the SDK's "." entry bundled for the browser (esbuild)
 * and loaded in headless Chromium, on one origin; a seller taking sessions (the web-standard handler
 * on @hono/node-server, `cors: {origin: '*'}`) on another. The page's buyer opens a session through
 * the seller (x-agentpay-session-open through the preflight, the grant read from
 * x-agentpay-session-grant), pays three calls with vouchers (x-agentpay-voucher) and reads each
 * per-call receipt (x-agentpay-session-receipt), then closes the session (x-agentpay-session-close):
 * every session header is in the preflight's allow list or the response's expose list, as
 * docs/protocol.md says. The ledger after the close moves what the calls cost.
 * Without /usr/bin/chromium the test is skipped with a message, except under CI.
 */
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { serve, type ServerType } from '@hono/node-server';
import { build } from 'esbuild';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, openPage } from '../helpers/chromium.js';
import { paidHandler } from '../../packages/sdk/src/seller/web.js';
import { SESSION_CLOSE_HEADER, SESSION_GRANT_HEADER, SESSION_OPEN_HEADER, SESSION_RECEIPT_HEADER, VOUCHER_HEADER } from '../../packages/sdk/src/contract/sessions.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { verifyLedger } from '../../src/domain/wallets/verify.js';
import { expectLedgerConsistent, fundedAgent, platformRevenue, publish } from './helpers.js';

const SDK = fileURLToPath(new URL('../../packages/sdk', import.meta.url));
const skipBrowser = !existsSync(CHROMIUM) && !process.env.CI;
if (skipBrowser) process.stderr.write(`[session-cors test] SKIPPED: ${CHROMIUM} is missing (apt-get install -y chromium). Under CI (env CI set) it fails instead.\n`);

describe.skipIf(skipBrowser)('payment sessions from a page on another origin', () => {
  let t: TestGateway;
  let seller: ServerType;
  let sellerUrl: string;
  let pageServer: http.Server;
  let browser: Awaited<ReturnType<typeof openPage>> | undefined;
  let page: Page;
  let pageErrors: string[] = [];
  /** the session headers each request to the seller carried (a preflight: asked to send) */
  const seen: { method: string; headers: string[] }[] = [];

  beforeAll(async () => {
    t = await startTestGateway();
    const capabilityId = await publish(t, '10', 'Forecast (sessions from a browser)');
    const handler = paidHandler({ gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, capabilityId, cors: { origin: '*' }, sessions: {}, onError: () => {} }, async () => Response.json({ sunny: true }));
    const sessionHeaders = [SESSION_OPEN_HEADER, VOUCHER_HEADER, SESSION_CLOSE_HEADER];
    await new Promise<void>((r) => {
      seller = serve({
        fetch: (req) => {
          const requested = req.headers.get('access-control-request-headers') ?? '';
          seen.push({ method: req.method, headers: sessionHeaders.filter((h) => req.headers.has(h) || requested.includes(h)) });
          return handler(req);
        },
        hostname: '127.0.0.1',
        port: 0,
      }, () => r());
    });
    sellerUrl = `http://127.0.0.1:${(seller.address() as AddressInfo).port}`;

    const sdk = (await build({
      stdin: { contents: "export * from 'agentpay-sdk';", resolveDir: SDK, loader: 'ts' },
      bundle: true, platform: 'browser', format: 'esm', target: 'es2022', write: false, logLevel: 'silent', conditions: ['agentpay-source'],
    })).outputFiles[0]!.text;
    pageServer = http.createServer((req, res) => {
      if (req.url === '/sdk.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(sdk);
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>sessions</title><script type="module">import * as sdk from "/sdk.js"; window.sdk = sdk; window.sdkReady = true;</script>');
    });
    await new Promise<void>((r) => pageServer.listen(0, '127.0.0.1', r));
    // localhost: another origin than the seller's 127.0.0.1
    browser = await openPage(`http://localhost:${(pageServer.address() as AddressInfo).port}/`, 'sdkReady');
    ({ page, errors: pageErrors } = browser);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((r) => pageServer?.close(r));
    await new Promise((r) => seller?.close(r));
    await t?.close();
  });

  type Sdk = typeof import('../../packages/sdk/src/index.js');

  it('opens, pays with vouchers, reads each receipt and closes, every session header through CORS', async () => {
    const a = await fundedAgent(t, '1000');
    const sellerBalance = async () => BigInt((await t.provider.wallets.balance(t.creds.provider.walletId)).balanceMinor);
    const [sellerBefore, platformBefore] = [await sellerBalance(), await platformRevenue(t)];
    const out = await page.evaluate(async ({ url, gatewayUrl, walletId, privateKeyPem, receiptHeader }) => {
      const sdk = (window as unknown as { sdk: Sdk }).sdk;
      const buyer = sdk.createBuyer({ gatewayUrl, walletId, privateKeyPem });
      const calls = [];
      for (let i = 0; i < 3; i++) {
        const res = await buyer.fetch(url);
        calls.push({ status: res.status, receipt: res.sessionReceipt ?? null, header: res.headers.get(receiptHeader) !== null });
      }
      const closed = await buyer.close();
      return { calls, closed: closed.map((s) => ({ status: s.status, claimedMinor: s.claimedMinor })) };
    }, { url: `${sellerUrl}/forecast`, gatewayUrl: t.baseUrl, walletId: a.walletId, privateKeyPem: a.privateKeyPem, receiptHeader: SESSION_RECEIPT_HEADER });

    // each call paid with a voucher; the page could read the receipt header, and the buyer verified it
    expect(out.calls.map((c) => c.status)).toEqual([200, 200, 200]);
    expect(out.calls.map((c) => c.header)).toEqual([true, true, true]);
    expect(out.calls.map((c) => c.receipt)).toMatchObject([1, 2, 3].map((sequence) => ({ type: 'session.receipt', sequence, chargedMinor: '10', cumulativeMinor: String(sequence * 10) })));
    expect(out.closed).toEqual([{ status: 'closed', claimedMinor: '30' }]);
    // the browser sent each session header, after a preflight (whose answer allowed them all: Chromium
    // keeps it for the later requests of the route)
    expect(seen.findIndex((s) => s.method === 'OPTIONS')).toBeGreaterThanOrEqual(0);
    for (const h of [SESSION_OPEN_HEADER, VOUCHER_HEADER, SESSION_CLOSE_HEADER]) {
      expect(seen.some((s) => s.method !== 'OPTIONS' && s.headers.includes(h)), `a request with ${h}`).toBe(true);
    }
    expect(pageErrors).toEqual([]);

    // the money: 30 paid, 3% fee rounded down (0), the hold released
    expect(await t.workspace.wallets.balance(a.walletId)).toMatchObject({ balanceMinor: '970', availableMinor: '970' });
    expect((await sellerBalance()) - sellerBefore).toBe(30n);
    expect((await platformRevenue(t)) - platformBefore).toBe(0n);
    await expectLedgerConsistent(t.workspace, a.walletId);
    expect((await verifyLedger(t.gw.store)).problems).toEqual([]);
  });

  it('exposes the grant and receipt headers, and allows the open, voucher and close headers, in what the seller answers', async () => {
    const pre = await fetch(`${sellerUrl}/forecast`, { method: 'OPTIONS', headers: { origin: 'http://localhost', 'access-control-request-method': 'GET', 'access-control-request-headers': VOUCHER_HEADER } });
    expect(pre.status).toBe(204);
    const allowed = pre.headers.get('access-control-allow-headers')!.split(', ');
    expect(allowed).toEqual(expect.arrayContaining([SESSION_OPEN_HEADER, VOUCHER_HEADER, SESSION_CLOSE_HEADER]));
    const unpaid = await fetch(`${sellerUrl}/forecast`, { headers: { origin: 'http://localhost' } });
    expect(unpaid.status).toBe(402);
    expect(unpaid.headers.get('access-control-expose-headers')!.split(', ')).toEqual(expect.arrayContaining([SESSION_GRANT_HEADER, SESSION_RECEIPT_HEADER]));
  });
});
