/**
 * Debian's Chromium, headless, driven by playwright-core: the flags this machine needs (no sandbox as
 * root; no background networking, whose connections the closed network refuses) and certificates of
 * the tests' own CA accepted.
 */
import { chromium, type BrowserContext } from 'playwright-core';

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
