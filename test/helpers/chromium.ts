/**
 * Debian's Chromium, headless, driven by playwright-core: the flags this machine needs (no sandbox as
 * root; no background networking, whose connections the closed network refuses) and certificates of
 * the tests' own CA accepted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

export function launchChromium(profileDir: string, options: Parameters<typeof chromium.launchPersistentContext>[1] = {}): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    // the test gateway's certificate is signed by the test's own CA
    ignoreHTTPSErrors: true,
    ...options,
  });
}

/**
 * A page of a fresh profile at `url`, once `window[ready]` is true; the page's uncaught errors are
 * collected in `errors`; `close` closes the browser and removes the profile.
 */
export async function openPage(url: string, ready: string): Promise<{ page: Page; errors: string[]; close(): Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), 'agentpay-chromium-'));
  const context = await launchChromium(profile);
  const errors: string[] = [];
  const close = async () => {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  };
  try {
    context.on('weberror', (e) => errors.push(String(e.error())));
    const page = await context.newPage();
    await page.goto(url);
    await page.waitForFunction((name) => (window as unknown as Record<string, unknown>)[name] === true, ready);
    return { page, errors, close };
  } catch (e) {
    await close();
    throw e;
  }
}
