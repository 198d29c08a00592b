/**
 * What one commit costs the gateway's store: N sequential transactions (each appends four
 * ledger entries, as a paid call's complete does), one at a time so that no two share a
 * commit, under each durability mode. Prints CPU (user, system) and wall microseconds per
 * transaction.
 *
 *   npx tsx bench/commits.ts [--transactions 3000]
 *
 * "no sync" replaces the log sync by nothing, to show what the sync itself costs; it is a
 * measurement only, never a mode of the store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { systemClock } from '../src/core/clock.js';
import { randomIds } from '../src/core/ids.js';
import { post } from '../src/domain/wallets/ledger.js';
import { createTenant } from '../src/domain/tenancy/tenants.js';
import { SqliteStore, type SqliteStoreOptions } from '../src/store/sqlite/sqlite-store.js';

const { values } = parseArgs({ options: { transactions: { type: 'string' } } });
const N = Number(values.transactions ?? 3000);
const deps = { clock: systemClock, ids: randomIds };

async function measure(label: string, opts: Partial<SqliteStoreOptions>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'agentpay-commits-'));
  const store = new SqliteStore({ path: join(dir, 'bench.db'), ...opts });
  try {
    const wallet = await store.tx(async (r) => (await createTenant(r, deps, { kind: 'provider', name: 'bench' })).settlementWalletId!);
    await store.tx((r) => post(r, deps, { walletId: wallet, type: 'fund', amountMinor: 10n ** 12n, currency: 'USD' }));
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < N; i++) {
      await store.tx(async (r) => {
        for (let k = 0; k < 4; k++) await post(r, deps, { walletId: wallet, type: 'hold', amountMinor: 0n, holdMinor: 1n, currency: 'USD', memo: 'bench' });
      });
    }
    const cpu = process.cpuUsage(cpu0);
    const us = (x: number) => Math.round(x / N);
    console.log(`${label.padEnd(28)} CPU ${us(cpu.user + cpu.system)} µs/tx (user ${us(cpu.user)}, system ${us(cpu.system)}), wall ${us((performance.now() - t0) * 1000)} µs/tx`);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await measure('background (default)', {});
await measure('in-commit (synchronous=FULL)', { durability: 'in-commit' });
await measure('background, no sync', { datasync: (_fd, done) => setImmediate(() => done(null)) });
