/**
 * The web dashboard (docs/dashboard.md) in a real headless Chromium against a real HTTPS
 * gateway and a real fastify seller: a person signs in with the account they signed up with,
 * sees a paid purchase appear with its receipt verified in the page, approves a held purchase
 * with the keyboard on a phone-width screen and sees the agent's retry go through; the
 * provider and operator keys get their own views. Screenshots go to test-artifacts/.
 *
 * Chromium is Debian's package (`apt-get install -y chromium`, which .ci/run does). Without
 * /usr/bin/chromium the browser tests are skipped with a message, except under CI (env CI
 * set), where a missing browser fails them. The checks of the served files need no browser.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import type { BrowserContext, Page } from 'playwright-core';
import { CHROMIUM, launchChromium } from '../helpers/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuyer } from '../../packages/sdk/src/buyer/index.js';
import type { AgentpayClient } from '../../packages/sdk/src/client/index.js';
import { dashboardUrl } from '../../src/cli/dev.js';
import dashboardRoutes, { DASHBOARD_CSP, dashboardFile } from '../../src/gateway/routes/dashboard.js';
import errors from '../../src/gateway/plugins/errors.js';
import { sqliteOf, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectLedgerConsistent, fetchTrusting, publish, startFastifySeller, type RunningSeller } from '../e2e/helpers.js';
import { expectLedgerConsistent as expectAllLedgersConsistent, ledgerBalance } from '../payments/helpers.js';
import { signUp } from '../tenancy/helpers.js';
import { generateEd25519, signObject } from '../../src/core/ed25519.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ARTIFACTS = join(ROOT, 'test-artifacts');
const haveChromium = existsSync(CHROMIUM);
const inCi = Boolean(process.env.CI);
const skipBrowser = !haveChromium && !inCi;
if (skipBrowser) {
  process.stderr.write(`[dashboard test] SKIPPED the browser tests: ${CHROMIUM} is missing (install it: apt-get install -y chromium). Under CI (env CI set) they fail instead.\n`);
}

let t: TestGateway;

beforeAll(async () => {
  // the page as the sources are now (npm run build does the same)
  const vite = spawnSync(process.execPath, [join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '--config', join(ROOT, 'dashboard/vite.config.ts')], { cwd: ROOT, encoding: 'utf8' });
  if (vite.status !== 0) throw new Error(`vite build failed:\n${vite.stdout}${vite.stderr}`);
  t = await startTestGateway({ config: { devEchoTokens: true } });
});
afterAll(async () => {
  await t?.close();
});

/** A raw HTTPS GET of a path exactly as written (no URL normalisation of `..`). */
function rawGet(path: string, base = t.baseUrl): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: u.hostname, port: u.port, path, method: 'GET', ca: t.ca }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the dashboard files the gateway serves', () => {
  it('serves the page at /dashboard and /dashboard/ with its CSP, and each asset with its content type', async () => {
    for (const path of ['/dashboard', '/dashboard/']) {
      const res = await rawGet(path);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['content-security-policy']).toBe(DASHBOARD_CSP);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.body).toContain('<div id="root">');
      // no inline script: every script is a file of this origin
      expect(res.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    }
    const index = readFileSync(join(ROOT, 'dist/dashboard/index.html'), 'utf8');
    const js = /src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(index)![1]!;
    const css = /href="(\/dashboard\/assets\/[^"]+\.css)"/.exec(index)![1]!;
    const script = await rawGet(js);
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(script.body.length).toBeGreaterThan(1000);
    const style = await rawGet(css);
    expect(style.headers['content-type']).toBe('text/css; charset=utf-8');
  });

  it('serves nothing outside its folder, however the path is written', async () => {
    for (const path of [
      '/dashboard/%2e%2e/%2e%2e/package.json',
      '/dashboard/..%2f..%2fpackage.json',
      '/dashboard/assets/..%2F..%2F..%2Fpackage.json',
      '/dashboard/..%5c..%5cpackage.json',
      '/dashboard/%2fetc%2fpasswd',
      '/dashboard//etc/passwd',
      '/dashboard/index.html%00.js',
      '/dashboard/assets',
      '/dashboard/no-such-file.js',
    ]) {
      const res = await rawGet(path);
      expect(res.status, path).toBe(404);
      expect(JSON.parse(res.body).error.code, path).toBe('NOT_FOUND');
      expect(res.body).not.toContain('"name": "agentpay"');
      expect(res.body).not.toContain('root:');
    }
  });

  it('resolves a path only to a file inside the folder', () => {
    const root = '/srv/dash';
    expect(dashboardFile(root, '')).toBe('/srv/dash/index.html');
    expect(dashboardFile(root, 'assets/index-abc.js')).toBe('/srv/dash/assets/index-abc.js');
    for (const bad of ['..', '../x', 'a/../../x', './x', 'a//b', '/etc/passwd', 'a\\..\\b', 'x\0y', 'a/', 'a/.']) {
      expect(dashboardFile(root, bad), JSON.stringify(bad)).toBeUndefined();
    }
  });

  it('answers 503 naming npm run build where the page is not built, and follows no link out of its folder', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentpay-dashboard-'));
    try {
      const unbuilt = Fastify();
      await unbuilt.register(errors);
      await unbuilt.register(dashboardRoutes, { root: join(dir, 'not-built') });
      const res = await unbuilt.inject({ method: 'GET', url: '/dashboard/' });
      expect(res.statusCode).toBe(503);
      expect(res.json().error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: expect.stringContaining('npm run build') });
      await unbuilt.close();

      const root = join(dir, 'built');
      mkdirSync(root);
      writeFileSync(join(root, 'index.html'), '<!doctype html><title>x</title>');
      writeFileSync(join(dir, 'secret.txt'), 'outside');
      symlinkSync(join(dir, 'secret.txt'), join(root, 'leak.txt'));
      const app = Fastify();
      await app.register(errors);
      await app.register(dashboardRoutes, { root });
      expect((await app.inject({ method: 'GET', url: '/dashboard/index.html' })).statusCode).toBe(200);
      const leak = await app.inject({ method: 'GET', url: '/dashboard/leak.txt' });
      expect(leak.statusCode).toBe(404);
      expect(leak.body).not.toContain('outside');
      await app.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses plain HTTP like every route', async () => {
    const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const u = new URL(t.httpUrl);
      import('node:http').then(({ request }) => {
        const req = request({ host: u.hostname, port: u.port, path: '/dashboard/', method: 'GET' }, (r) => {
          const chunks: Buffer[] = [];
          r.on('data', (c: Buffer) => chunks.push(c));
          r.on('end', () => resolve({ status: r.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        });
        req.on('error', reject);
        req.end();
      }, reject);
    });
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body).error.code).toBe('INSECURE_TRANSPORT');
  });

  it('agentpay dev prints a URL that carries the key in the fragment only', () => {
    const url = new URL(dashboardUrl('https://127.0.0.1:4402', 'ap_ws_secret'));
    expect(url.pathname).toBe('/dashboard/');
    expect(url.search).toBe('');
    expect(url.hash).toBe('#key=ap_ws_secret');
    expect(dashboardUrl('https://127.0.0.1:4402/')).toBe('https://127.0.0.1:4402/dashboard/');
  });
});

describe.skipIf(skipBrowser)('the dashboard in headless Chromium', () => {
  let context: BrowserContext;
  let profile: string;
  let seller: RunningSeller;
  let ws: { email: string; password: string; id: string; key: string; client: AgentpayClient };
  let agent: AgentpayClient;
  let wallet: { walletId: string; privateKeyPem: string };
  let capabilities: { price100: string; price1: string };
  let pageErrors: string[];

  beforeAll(async () => {
    if (!haveChromium) throw new Error(`${CHROMIUM} is missing and CI is set: install the Debian package chromium (apt-get install -y chromium) before the tests, as .ci/run does`);
    mkdirSync(ARTIFACTS, { recursive: true });
    capabilities = { price100: await publish(t, '100'), price1: await publish(t, '1') };
    seller = await startFastifySeller(t, capabilities);
    const signed = await signUp(t, { kind: 'workspace', name: 'Dashboard Buyers' });
    ws = { email: signed.email, password: signed.password, id: signed.tenant.id, key: signed.apiKey.key, client: t.client(signed.apiKey.key) };
    await ws.client.policies.apply('approval "over 50":\n  price > 50\n');
    agent = t.client((await ws.client.keys.create({ preset: 'agent' })).apiKey.key);
    const a = await t.newAgentWallet(ws.client, 'dashboard-agent');
    await ws.client.wallets.fund(a.walletId, '1000');
    wallet = a;
    profile = mkdtempSync(join(tmpdir(), 'agentpay-chromium-'));
    context = await launchChromium(profile, { viewport: { width: 1280, height: 900 } });
    pageErrors = [];
    context.on('weberror', (e) => pageErrors.push(String(e.error())));
    // a Content-Security-Policy violation, a failed script or a missing file is a console error
    context.on('console', (m) => {
      if (m.type() === 'error') pageErrors.push(`${m.text()} (${m.location().url})`);
    });
  });
  afterAll(async () => {
    await context?.close();
    await seller?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  const buyer = () => createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: wallet.walletId, privateKeyPem: wallet.privateKeyPem, fetch: fetchTrusting(t.ca) });

  /** A payment session of the dev provider's opened from the wallet's signed open request, with a claim of `claimMinor` (docs/protocol.md § Payment sessions). */
  async function openedSession(w: { walletId: string; privateKeyPem: string }, capabilityId: string, capMinor: string, claimMinor: string): Promise<string> {
    const sessionKey = generateEd25519();
    const unsigned = {
      version: 1 as const, type: 'session.open' as const, walletId: w.walletId, providerId: t.creds.provider.id, capabilityId, capMinor, currency: 'USD',
      expiresAt: new Date(t.clock.now() + 3_600_000).toISOString(), sessionPublicKey: sessionKey.publicKeyPem, nonce: `dashboard-${Date.now()}-${Math.random().toString(36).slice(2)}`,
      signedAt: new Date(t.clock.now()).toISOString(),
    };
    const { session } = await t.provider.sessions.open({ open: { ...unsigned, signature: signObject(w.privateKeyPem, unsigned) }, sellerPublicKey: generateEd25519().publicKeyPem });
    const voucher = { sessionId: session.id, cumulativeMinor: claimMinor, sequence: 1, requestHash: `sha256:${'0'.repeat(64)}` };
    const [claim] = await t.provider.sessions.claim([{ sessionId: session.id, voucher: { ...voucher, signature: signObject(sessionKey.privateKeyPem, voucher) } }]);
    expect(claim!.status).toBe(200);
    return session.id;
  }

  async function refreshUntil(page: Page, selector: string, text: string): Promise<void> {
    // the page reloads every 30 s by itself; the test presses Refresh instead of waiting
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.locator(selector).filter({ hasText: text }).first().waitFor({ timeout: 20_000 });
  }


  /**
   * No table widens the page, at 1280 px nor at a phone's 390 px: every table (those in closed
   * <details> opened first) lies inside the viewport; at 1280 px each fits its frame with no
   * sideways scrolling, at 390 px a wider one scrolls inside its own frame (overflow-x: auto),
   * never the page. A screenshot of each width goes to test-artifacts/.
   */
  async function expectTablesFit(page: Page, name: string): Promise<void> {
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      const layout = await page.evaluate(() => {
        document.querySelectorAll('details').forEach((d) => (d.open = true));
        const view = document.documentElement.clientWidth;
        const tables = Array.from(document.querySelectorAll('table')).map((table) => {
          const frame = table.closest('.table-wrap');
          const box = (frame ?? table).getBoundingClientRect();
          return {
            label: frame?.getAttribute('aria-label') ?? table.textContent?.slice(0, 40) ?? '',
            framed: frame instanceof HTMLElement,
            scrolls: frame instanceof HTMLElement && getComputedStyle(frame).overflowX === 'auto',
            left: box.left,
            right: box.right,
            tableWidth: table.scrollWidth,
            frameWidth: frame instanceof HTMLElement ? frame.clientWidth : box.width,
          };
        });
        return { view, page: document.documentElement.scrollWidth, tables };
      });
      expect(layout.tables.length, `${name}: tables found`).toBeGreaterThan(0);
      expect(layout.page, `${name} at ${width} px: the page is no wider than the screen`).toBeLessThanOrEqual(layout.view);
      for (const tb of layout.tables) {
        const what = `${name} at ${width} px, table ${tb.label}`;
        expect(tb.framed, what).toBe(true);
        expect(tb.scrolls, what).toBe(true);
        expect(tb.left, what).toBeGreaterThanOrEqual(0);
        expect(tb.right, what).toBeLessThanOrEqual(layout.view);
        if (width === 1280) expect(tb.tableWidth, `${what}: fits its frame`).toBeLessThanOrEqual(tb.frameWidth);
      }
      await page.screenshot({ path: join(ARTIFACTS, `dashboard-${name}-${width}.png`), fullPage: true });
    }
  }

  it('signs in with the account, shows a purchase with its receipt verified, and a held purchase approved with the keyboard goes through', async () => {
    // a purchase no rule holds
    const cheap = await buyer().fetch(`${seller.url}/cheap`);
    expect(cheap.status).toBe(200);
    const firstReceipt = cheap.receipt!;
    expect(firstReceipt.status).toBe('success');

    const page = await context.newPage();
    await page.goto(`${t.baseUrl}/dashboard/`);
    await page.getByLabel('Email').fill(ws.email);
    await page.getByLabel('Password').fill(ws.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('Dashboard Buyers').waitFor();

    // the purchase, verified in the page against the platform's receipt key
    const row = page.locator(`tr[data-receipt="${firstReceipt.id}"]`);
    await row.filter({ hasText: 'verified' }).waitFor();
    expect(await row.textContent()).toContain('0.01 USD');
    expect(await page.locator('#wallets').textContent()).toContain('9.99 USD');
    expect(await page.locator('#spend svg[role="img"]').count()).toBeGreaterThanOrEqual(2);
    // per capability, by name (publish() names it `Forecast 1`)
    expect(await page.locator('#spend').textContent()).toContain('Forecast 1');
    expect(await page.locator('#policies').textContent()).toContain('price > 50');
    // its transaction, with the ledger entries behind it
    await page.locator('#transactions summary', { hasText: firstReceipt.transactionId }).click();
    expect(await page.locator('#transactions').textContent()).toMatch(/-0\.01 USD|0\.01 USD/);

    // a receipt changed on its way to the page fails the check in the page
    await page.route('**/v1/receipts?**', async (route) => {
      const response = await route.fetch();
      const body = (await response.json()) as { receipts: { id: string; amount: { amountMinor: string } }[] };
      for (const r of body.receipts) if (r.id === firstReceipt.id) r.amount.amountMinor = '2';
      await route.fulfill({ response, json: body });
    });
    await refreshUntil(page, `tr[data-receipt="${firstReceipt.id}"]`, 'signature invalid');
    await page.unroute('**/v1/receipts?**');
    await refreshUntil(page, `tr[data-receipt="${firstReceipt.id}"]`, 'verified');

    // the agent buys what the policy holds for a person, and waits for the decision
    let announce!: (id: string) => void;
    const pending = new Promise<string>((resolve) => (announce = resolve));
    const handled = seller.log.handled.forecast ?? 0;
    const purchase = buyer().fetchWithApproval(`${seller.url}/forecast`, undefined, { approvals: agent, pollMs: 50, timeoutMs: 60_000, onPending: announce });
    const approvalId = await pending;
    expect(approvalId).toMatch(/^apr_/);

    // on a phone-width screen: the held purchase is there, and nothing is wider than the screen
    await page.setViewportSize({ width: 375, height: 812 });
    await refreshUntil(page, '#approvals li', approvalId);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    const approve = page.getByRole('button', { name: 'Approve', exact: true });
    const box = (await approve.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(375);
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-phone-approval.png'), fullPage: true });

    // with the keyboard only: Tab from the header's Refresh to Approve, then Enter
    await page.getByRole('button', { name: 'Refresh' }).focus();
    let focused = '';
    for (let i = 0; i < 30 && focused !== 'Approve'; i++) {
      await page.keyboard.press('Tab');
      focused = await page.evaluate(() => (document.activeElement instanceof HTMLButtonElement ? document.activeElement.textContent ?? '' : ''));
    }
    expect(focused).toBe('Approve');
    // a visible focus ring
    expect(await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)).not.toBe('none');
    await page.keyboard.press('Enter');
    await page.getByText(`${approvalId} approved`).waitFor();

    // the agent's retry goes through, paid once
    const res = await purchase;
    expect(res.status).toBe(200);
    expect(res.receipt).toMatchObject({ status: 'success', consumerId: wallet.walletId, amount: { amountMinor: '100', currency: 'USD' } });
    expect(seller.log.handled.forecast).toBe(handled + 1);
    expect((await ws.client.approvals.get(approvalId)).approval).toMatchObject({ status: 'approved', usedAt: expect.any(String) });

    // and the page shows it: the new receipt verified, the wallet down by both purchases
    await page.setViewportSize({ width: 1280, height: 900 });
    await refreshUntil(page, `tr[data-receipt="${res.receipt!.id}"]`, 'verified');
    expect(await page.locator(`tr[data-receipt="${res.receipt!.id}"]`).textContent()).toContain('1.00 USD');
    // the wallets load apart from the receipts: wait for them too
    await page.locator('#wallets', { hasText: '8.99 USD' }).waitFor({ timeout: 20_000 });
    await page.locator('#approvals summary', { hasText: 'Decided' }).click();
    expect(await page.locator('#approvals').textContent()).toContain('approved');

    // a payment session of the wallet's (cap 0.50 USD) that the seller claimed 0.20 USD of: an open session with its spend
    const session = await openedSession(wallet, capabilities.price1, '50', '20');
    await refreshUntil(page, `tr[data-session="${session}"]`, '0.20 USD');
    expect(await page.locator(`tr[data-session="${session}"]`).textContent()).toMatch(/0\.20 USD\s*of 0\.50 USD/);
    expect(await page.locator('#sessions-title').textContent()).toBe('Open sessions (1)');
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-workspace.png'), fullPage: true });
    await expectTablesFit(page, 'workspace');
    // the seller closes it: the rest goes back, and the page lists it no more
    await t.provider.sessions.close(session);
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.getByText('No open payment session').waitFor();

    expect(ledgerBalance(t, wallet.walletId)).toEqual({ balance: 879n, held: 0n });
    await expectLedgerConsistent(ws.client, wallet.walletId);
    expectAllLedgersConsistent(t);

    // signing out revokes the key the login minted
    const keysBefore = (await ws.client.keys.list()).keys.filter((k) => k.name.startsWith('login ') && !k.revokedAt);
    expect(keysBefore).toHaveLength(1);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to the agentpay dashboard' }).waitFor();
    expect((await ws.client.keys.list()).keys.filter((k) => k.name.startsWith('login ') && !k.revokedAt)).toHaveLength(0);
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await page.close();
    // no script error, no CSP violation, no missing file (the favicon included)
    expect(pageErrors).toEqual([]);
  });

  it('a held purchase denied in the page is refused to the agent, nothing charged', async () => {
    const before = ledgerBalance(t, wallet.walletId);
    const handled = seller.log.handled.forecast ?? 0;
    let announce!: (id: string) => void;
    const pending = new Promise<string>((resolve) => (announce = resolve));
    const purchase = buyer().fetchWithApproval(`${seller.url}/forecast`, undefined, { approvals: agent, pollMs: 50, timeoutMs: 60_000, onPending: announce }).then(
      () => 'paid',
      (e: { code?: string }) => e.code,
    );
    const approvalId = await pending;

    const page = await context.newPage();
    await page.goto(dashboardUrl(t.baseUrl, ws.key));
    const item = page.locator('#approvals li', { hasText: approvalId });
    await item.waitFor();
    await item.getByRole('button', { name: 'Deny', exact: true }).click();
    await page.getByText(`${approvalId} denied`).waitFor();

    expect(await purchase).toBe('APPROVAL_DENIED');
    expect(seller.log.handled.forecast ?? 0).toBe(handled);
    expect((await ws.client.approvals.get(approvalId)).approval.status).toBe('denied');
    expect(ledgerBalance(t, wallet.walletId)).toEqual(before);
    await expectLedgerConsistent(ws.client, wallet.walletId);
    await page.close();
  });

  it('follows the event feed: a new sale appears with its receipt and the wallet moves, without a reload', async () => {
    const page = await context.newPage();
    // the feed's answers the page reads, with the time each came
    const feedAnswers: { at: number; types: string[]; receiptIds: unknown[] }[] = [];
    page.on('response', (r) => {
      if (!new URL(r.url()).pathname.endsWith('/v1/events') || r.status() !== 200) return;
      void r.json().then((b: { events: { type: string; data: { receiptId?: unknown } }[] }) =>
        feedAnswers.push({ at: Date.now(), types: b.events.map((e) => e.type), receiptIds: b.events.map((e) => e.data.receiptId) }));
    });
    let receiptLoads = 0;
    page.on('request', (r) => {
      if (new URL(r.url()).pathname.endsWith('/v1/receipts')) receiptLoads++;
    });
    const opened = Date.now();
    await page.goto(dashboardUrl(t.baseUrl, ws.key));
    await page.locator('[data-feed="following"]').waitFor();
    expect(await page.locator('[data-feed]').textContent()).toContain('live');
    const walletBefore = await page.locator('#wallets').textContent();
    const loadsBefore = receiptLoads;

    // a sale, made outside the page
    const sale = await buyer().fetch(`${seller.url}/cheap`);
    expect(sale.status).toBe(200);
    const receiptId = sale.receipt!.id;

    // it comes: no Refresh pressed, no navigation, well before the 30-second reload
    const row = page.locator(`tr[data-receipt="${receiptId}"]`);
    await row.filter({ hasText: 'verified' }).waitFor({ timeout: 15_000 });
    expect(Date.now() - opened, 'the sale came by the feed, before the 30-second reload').toBeLessThan(29_000);
    expect(receiptLoads).toBeGreaterThan(loadsBefore);
    // the feed brought its payment.succeeded before the page read the receipts again
    expect(feedAnswers.some((a) => a.types.includes('payment.succeeded') && a.receiptIds.includes(receiptId))).toBe(true);
    expect(await row.textContent()).toContain('0.01 USD');
    await page.locator('#transactions summary', { hasText: sale.receipt!.transactionId }).waitFor();
    await expect.poll(() => page.locator('#wallets').textContent()).not.toBe(walletBefore);
    expect(page.url()).toBe(`${t.baseUrl}/dashboard/`);
    expect(await page.evaluate(() => performance.getEntriesByType('navigation').length)).toBe(1);
    expectAllLedgersConsistent(t);
    await page.close();
  });

  it("agentpay dev's URL signs its key in and takes it out of the address bar; a provider sees its capabilities' calls, revenue and failure rate, its wallet and payouts", async () => {
    const page = await context.newPage();
    await page.goto(dashboardUrl(t.baseUrl, t.creds.provider.apiKey));
    await page.getByRole('heading', { name: 'Capabilities' }).waitFor();
    expect(await page.evaluate(() => window.location.hash)).toBe('');
    expect(page.url()).not.toContain(t.creds.provider.apiKey);

    const forecast = page.locator(`tr[data-capability="${capabilities.price100}"]`);
    await forecast.waitFor();
    // the held purchase paid once: one call, none failed, 1.00 USD
    const cells = await forecast.locator('td').allTextContents();
    expect(cells.slice(3)).toEqual(['1', '0', '0.0%', '1.00 USD']);
    expect(await page.locator(`tr[data-capability="${capabilities.price1}"] td`).allTextContents()).toContain('0.01 USD');
    await page.getByRole('heading', { name: 'Settlement wallet' }).waitFor();
    expect(await page.locator('#wallet').textContent()).toContain(t.creds.provider.walletId);
    await page.getByRole('heading', { name: 'Payouts' }).waitFor();
    await page.locator('#payouts').getByText('No payout yet').waitFor();
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-provider.png'), fullPage: true });
    await expectTablesFit(page, 'provider');
    await page.close();
  });

  it('the operator sees sales and failures over time, the fees and paid calls per day as plots, verification requests and stuck payouts', async () => {
    // a call the seller fails, bought by a wallet no policy holds: the buyer refunded, a failure to plot
    const other = await t.newAgentWallet(t.workspace, 'dashboard-failures');
    await t.workspace.wallets.fund(other.walletId, '1000');
    const failing = createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: other.walletId, privateKeyPem: other.privateKeyPem, fetch: fetchTrusting(t.ca) });
    expect((await failing.fetch(`${seller.url}/server-error`)).status).toBe(503);
    expect(ledgerBalance(t, other.walletId)).toEqual({ balance: 1000n, held: 0n });
    // what the charts must total, counted from the database
    const db = sqliteOf(t.gw);
    const count = (status: string) => Number((db.prepare('SELECT count(*) AS n FROM transactions WHERE status = ?').get(status) as { n: bigint | number }).n);
    const volume = BigInt((db.prepare("SELECT coalesce(sum(amount_minor), 0) AS v FROM transactions WHERE status = 'succeeded'").get() as { v: bigint | number | string }).v);
    const paid = count('succeeded');
    const failed = count('failed') + count('expired');
    expect(paid).toBeGreaterThanOrEqual(3);
    expect(failed).toBeGreaterThanOrEqual(1);

    const p = await t.newProvider({ name: 'Waiting Seller', verified: false });
    await p.client.providers.requestVerification(p.id, { note: 'please verify us' });
    const page = await context.newPage();
    await page.goto(dashboardUrl(t.baseUrl, t.creds.operatorKey));
    await page.getByRole('heading', { name: 'Verification requests' }).waitFor();
    // sales and failures, counted by the gateway (GET /v1/platform/activity), by day and then by hour
    const activity = page.locator('#activity');
    const usd = (minor: bigint) => `${minor / 100n}.${String(minor % 100n).padStart(2, '0')} USD`;
    for (const by of ['day', 'hour']) {
      if (by === 'hour') await activity.getByRole('button', { name: 'By hour' }).click();
      expect(await activity.getByRole('button', { name: `By ${by}` }).getAttribute('aria-pressed')).toBe('true');
      await activity.locator('figure', { hasText: `Paid calls per ${by}` }).filter({ hasText: `total ${paid} paid` }).waitFor();
      await activity.locator('figure', { hasText: `Failed calls per ${by}` }).filter({ hasText: `total ${failed} failed` }).waitFor();
      await activity.locator('figure', { hasText: `Volume per ${by}` }).filter({ hasText: `total ${usd(volume)}` }).waitFor();
      await activity.locator('figure', { hasText: `Fees on paid calls per ${by}` }).filter({ hasText: 'total 0.03 USD' }).waitFor();
      expect(await activity.locator('svg[role="img"]').count()).toBe(4);
    }
    // the fees of this file's paid calls: the 1.00 USD call left 0.03 USD (300 bps), the 0.01 USD one a fee of 0 (no entry)
    const revenue = page.locator('#revenue');
    await revenue.locator('figure', { hasText: 'Fees per day' }).filter({ hasText: 'total 0.03 USD' }).waitFor();
    await revenue.locator('figure', { hasText: 'Paid calls with a fee per day' }).filter({ hasText: 'total 1 paid' }).waitFor();
    expect(await revenue.locator('svg[role="img"]').count()).toBe(2);
    for (const label of await revenue.locator('svg[role="img"]').evaluateAll((svgs) => svgs.map((e) => e.getAttribute('aria-label')))) expect(label).toMatch(/bar chart, total/);
    await page.locator('#verification tr', { hasText: p.id }).filter({ hasText: 'please verify us' }).waitFor();
    await page.getByRole('heading', { name: 'Stuck payouts' }).waitFor();
    await page.locator('#stuck-payouts').getByText('No stuck payout').waitFor();
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-operator.png'), fullPage: true });
    await expectTablesFit(page, 'operator');
    await page.close();
    expect(pageErrors).toEqual([]);
  });
});
