/**
 * `agentpay demo` with the built binary, as CI runs it (stdout and stderr piped): it runs
 * to the end, shows the 100/97/3 movement in its text report and in --json, and leaves
 * nothing behind: its gateway and seller ports are closed and its temp dir is gone.
 */
import { existsSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { DemoSummary } from '../../../src/cli/demo/run.js';
import { cli, json, removeTempDirs, tempDir } from '../helpers.js';

afterAll(removeTempDirs);
const configDir = tempDir('agentpay-cli-demo-');
const demo = (...args: string[]) => cli(['demo', ...args], { configDir });

/** true when something accepts connections on the URL's port */
function listening(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((res) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once('connect', () => {
      socket.destroy();
      res(true);
    });
    socket.once('error', () => res(false));
  });
}

describe('agentpay demo --json', () => {
  it('runs to the end: three purchases, one refunded, the 100/97/3 movement, and nothing left running', async () => {
    const r = await demo('--json');
    expect(r.exitCode, r.stderr).toBe(0);
    const s = json<DemoSummary>(r);

    expect(s.search.results.map((x) => x.name).sort()).toEqual(['City weather forecast', 'Storm alerts']);
    expect(s.purchases.map((p) => [p.status, p.ok, p.refunded])).toEqual([[200, true, false], [200, true, false], [503, false, true]]);
    expect(s.receipts.map((x) => [x.status, x.amount.amountMinor, x.signatureValid])).toEqual([['success', '100', true], ['success', '100', true], ['failed', '100', true]]);

    expect(s.movement.transactionId).toBe(s.purchases[0]!.transactionId);
    expect([s.movement.buyer.amountMinor, s.movement.seller.amountMinor, s.movement.platform.amountMinor]).toEqual(['-100', '97', '3']);
    expect(s.movement.buyer.entries.map((e) => e.type)).toEqual(['hold', 'capture']);
    expect(s.refund).toMatchObject({ transactionId: s.purchases[2]!.transactionId, buyer: { amountMinor: '0' } });
    expect(s.refund!.buyer.entries.map((e) => e.type)).toEqual(['hold', 'refund']);
    expect(s.balances).toMatchObject({
      buyer: { beforeMinor: '1000', afterMinor: '800' },
      seller: { beforeMinor: '0', afterMinor: '194' },
      platform: { beforeMinor: '0', afterMinor: '6' },
    });

    // the progress lines on stderr are plain when it is not a terminal: no spinner, one line per step
    expect(r.stderr).not.toContain('\x1b[');
    expect(r.stderr).toMatch(/^✔ Buy Storm alerts for the Algarve: HTTP 503 from the seller: the call failed and was refunded/m);
    expect(r.stderr).toMatch(/^✔ Stop the seller and the gateway: temp dir removed$/m);

    expect(await listening(s.gateway.baseUrl)).toBe(false);
    expect(await listening(s.seller.url)).toBe(false);
    expect(s.gateway.kept).toBe(false);
    expect(existsSync(s.gateway.dataDir)).toBe(false);
  }, 120_000);
});

describe('agentpay demo', () => {
  it('prints a text report even when piped, with the movement buyer -100, seller +97, platform +3; --keep keeps the stopped data dir', async () => {
    const r = await demo('--keep');
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^buyer wal_\w+ +-100 /m);
    expect(r.stdout).toMatch(/^seller wal_\w+ +\+97 /m);
    expect(r.stdout).toMatch(/^platform fee wal_platform_revenue +\+3 /m);
    expect(r.stdout).toMatch(/^buyer wal_\w+ +1000 +800$/m);
    expect(r.stdout).toContain('failed, refunded');

    const dataDir = /the data is kept in (\S+)\./.exec(r.stdout)?.[1];
    expect(dataDir).toBeDefined();
    try {
      expect(existsSync(join(dataDir!, 'agentpay.db'))).toBe(true);
      expect(existsSync(join(dataDir!, 'gateway.json'))).toBe(false); // its gateway is stopped
      const baseUrl = /Start a sandbox gateway: (\S+)/.exec(r.stderr)![1]!;
      expect(await listening(baseUrl)).toBe(false);
    } finally {
      rmSync(dataDir!, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('agentpay --help', () => {
  it('reads like a table of contents: every topic with its one-line description, demo among the commands', async () => {
    const r = await cli(['--help'], { configDir });
    expect(r.exitCode).toBe(0);
    for (const topic of ['approvals', 'capabilities', 'config', 'gateway', 'keys', 'policies', 'providers', 'receipts', 'wallets']) {
      expect(r.stdout).toMatch(new RegExp(`^  ${topic} +\\S.*$`, 'm'));
    }
    expect(r.stdout).toMatch(/^  receipts +Signed receipts of paid calls: list, show, verify offline$/m);
    expect(r.stdout).toMatch(/^  demo +Watch the whole marketplace work/m);
  });
});
