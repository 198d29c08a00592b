/**
 * Durability without blocking the event loop. With `synchronous=FULL`, SQLite fsyncs
 * the write-ahead log inside COMMIT, and better-sqlite3 being synchronous, the whole
 * gateway stops for the fsync (1 to 8 ms on a virtual disk under load). Instead the
 * connection runs `synchronous=NORMAL` (COMMIT writes the log, no fsync) and this class
 * fdatasyncs the log file on libuv's thread pool after each COMMIT; the store
 * acknowledges a transaction, and returns a read, only once the sync that covers it is
 * done. Commits that happen while a sync runs share the next one (group commit).
 *
 * Why this is as durable as FULL: a COMMIT's frames are written to the log before
 * `committed()` is called, and an fdatasync started afterwards flushes every byte
 * written to the file before it began. The log is only ever appended to or rewritten in
 * place (a checkpoint's restart reuses the file), so the descriptor stays valid; SQLite
 * itself syncs the log before each checkpoint copies it into the database.
 */
import { closeSync, fdatasync, fsyncSync, openSync } from 'node:fs';
import { dirname } from 'node:path';

interface Waiter {
  upTo: number;
  resolve: () => void;
  reject: (e: unknown) => void;
}

export class WalSync {
  private readonly fd: number;
  /** commits made so far, and how many of them a finished sync covers */
  private committedCount = 0;
  private syncedCount = 0;
  private syncing = false;
  private waiters: Waiter[] = [];
  /**
   * A failed sync: what reached the disk is unknown from then on (Linux may drop the dirty
   * pages it could not write), so every later wait fails too and the store stops acknowledging.
   */
  private failure: unknown = undefined;

  /**
   * `walPath`: the database's `-wal` file, which must exist (it does once WAL mode is on).
   * `datasync` is node's fdatasync; tests pass one they can hold back.
   */
  constructor(walPath: string, private readonly datasync: (fd: number, done: (error: NodeJS.ErrnoException | null) => void) => void = fdatasync) {
    this.fd = openSync(walPath, 'r+');
    // the log's directory entry must survive a crash as well as its contents
    const dir = openSync(dirname(walPath), 'r');
    try {
      fsyncSync(dir);
    } finally {
      closeSync(dir);
    }
  }

  /** Call right after a COMMIT; resolves once that commit is on disk. */
  committed(): Promise<void> {
    this.committedCount++;
    return this.durable();
  }

  /** Resolves once every commit made so far is on disk (at once when nothing is pending). */
  durable(): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.syncedCount >= this.committedCount) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push({ upTo: this.committedCount, resolve, reject });
      this.sync();
    });
  }

  private sync(): void {
    if (this.syncing || this.waiters.length === 0) return;
    this.syncing = true;
    const upTo = this.committedCount;
    this.datasync(this.fd, (error) => {
      this.syncing = false;
      if (error) this.failure = error;
      else this.syncedCount = upTo;
      const still: Waiter[] = [];
      for (const w of this.waiters) {
        if (error) w.reject(error);
        else if (w.upTo <= upTo) w.resolve();
        else still.push(w);
      }
      this.waiters = error ? [] : still;
      this.sync();
    });
  }

  /** Waits for the syncs under way, then closes the descriptor. */
  async close(): Promise<void> {
    await this.durable().catch(() => undefined);
    closeSync(this.fd);
  }
}
