/**
 * Durability off the event loop: nothing is acknowledged, and no read returns, before the
 * log sync that covers it; commits made during one sync share the next.
 */
import { fdatasync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { SequentialIds } from '../../src/core/ids.js';
import { balanceOf, post } from '../../src/domain/wallets/ledger.js';
import { createTenant } from '../../src/domain/tenancy/tenants.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { WalSync } from '../../src/store/sqlite/wal-sync.js';

/** A datasync that really syncs, but only when the test releases it. */
function heldSync() {
  const held: Array<() => Promise<void>> = [];
  const calls = { count: 0 };
  const datasync = (fd: number, done: (e: NodeJS.ErrnoException | null) => void) => {
    calls.count++;
    held.push(() => new Promise<void>((synced) => fdatasync(fd, (e) => {
      done(e);
      synced();
    })));
  };
  /**
   * Lets the oldest held sync run and waits until its callbacks have run: the real fdatasync's
   * completion, however long the disk takes, then a macrotask for what WalSync resolves on it.
   */
  const release = async () => {
    await held.shift()!();
    await new Promise((r) => setImmediate(r));
  };
  return { datasync, release, calls, held };
}

/** Whether a promise has settled by the next macrotask (no sync is under way unless released: nothing else can settle it later). */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  p.then(() => (done = true), () => (done = true));
  await new Promise((r) => setImmediate(r));
  return done;
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'agentpay-walsync-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('WalSync', () => {
  it('resolves a commit only after a sync that began after it, and groups the commits made meanwhile', async () => {
    const file = join(dir, 'x.db-wal');
    writeFileSync(file, '');
    const s = heldSync();
    const wal = new WalSync(file, s.datasync);
    expect(await settled(wal.durable())).toBe(true); // nothing committed: nothing to wait for
    const first = wal.committed();
    const second = wal.committed();
    const third = wal.committed();
    expect(s.calls.count).toBe(1); // one sync under way; the later commits wait for the next
    expect(await settled(first)).toBe(false);
    await s.release();
    // the first sync began before the second and third commits, so it vouches for the first only
    expect(await settled(first)).toBe(true);
    expect(await settled(Promise.all([second, third]))).toBe(false);
    expect(s.calls.count).toBe(2);
    await s.release();
    expect(await settled(Promise.all([second, third]))).toBe(true);
    expect(s.calls.count).toBe(2);
    await wal.close();
  });

  it('fails the waiting commits and every later one when a sync fails', async () => {
    const file = join(dir, 'y.db-wal');
    writeFileSync(file, '');
    const broken = new Error('EIO: i/o error');
    const wal = new WalSync(file, (_fd, done) => setImmediate(() => done(Object.assign(broken, { code: 'EIO' }))));
    await expect(wal.committed()).rejects.toBe(broken);
    await expect(wal.durable()).rejects.toBe(broken);
    await expect(wal.committed()).rejects.toBe(broken);
    await wal.close();
  });
});

describe('SqliteStore with background durability', () => {
  const clock = new ManualClock();
  const ids = new SequentialIds();

  it('acknowledges a transaction, and returns a read that could see it, only after the log sync', async () => {
    const s = heldSync();
    const store = new SqliteStore({ path: join(dir, 'a.db'), datasync: s.datasync });
    try {
      expect(store.raw.pragma('synchronous', { simple: true })).toBe(1n); // NORMAL: COMMIT itself does not sync
      const creating = store.tx((r) => createTenant(r, { clock, ids }, { kind: 'provider', name: 'p' }));
      while (s.held.length === 0) await new Promise((r) => setTimeout(r, 5));
      expect(await settled(creating)).toBe(false);
      // committed, visible to the next read, but that read waits for the same sync
      const reading = store.read((r) => r.tenants.listByKind('provider'));
      expect(await settled(reading)).toBe(false);
      // an unsynced read (authentication) does not wait, and sees the commit
      expect(await store.read((r) => r.tenants.listByKind('provider'), { unsynced: true })).toHaveLength(1);
      await s.release();
      const tenant = await creating;
      await reading;
      // nothing new committed since: a read returns without a sync
      const before = s.calls.count;
      const b = await store.read((r) => balanceOf(r, tenant.settlementWalletId!));
      expect(b.balanceMinor).toBe(0n);
      expect(s.calls.count).toBe(before);
      // a batch of transactions shares one sync
      const w = tenant.settlementWalletId!;
      const funding = Promise.all(Array.from({ length: 20 }, () => store.tx((r) => post(r, { clock, ids }, { walletId: w, type: 'fund', amountMinor: 1n, currency: 'USD' }))));
      while (s.held.length === 0) await new Promise((r) => setTimeout(r, 5));
      await s.release();
      await funding;
      expect(s.calls.count).toBe(before + 1);
      expect((await store.read((r) => balanceOf(r, w))).balanceMinor).toBe(20n);
    } finally {
      while (s.held.length > 0) await s.release();
      await store.close();
    }
  });

  it("syncs inside COMMIT instead in 'in-commit' mode", async () => {
    const store = new SqliteStore({ path: join(dir, 'b.db'), durability: 'in-commit' });
    try {
      expect(store.raw.pragma('synchronous', { simple: true })).toBe(2n); // FULL
      const t = await store.tx((r) => createTenant(r, { clock, ids }, { kind: 'provider', name: 'q' }));
      expect(t.settlementWalletId).toBeTruthy();
    } finally {
      await store.close();
    }
  });
});
