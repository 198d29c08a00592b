/**
 * A voucher store in one directory (Node): a journal with group commit.
 *
 * Every `put` and `delete` appends one line to `vouchers.log`; the lines of every call made while a
 * write is under way leave together in the next write and one `fdatasync`, and each call resolves
 * only once its line is on disk. So a busy seller pays one flush for many calls, not two per call
 * (the record file, then its directory, as one file per session did). The records are kept in
 * memory as well: `get` and `all` (the claims) read no file, and so never queue behind the writes.
 *
 * When the journal passes `compactBytes`, the records are written to `vouchers.snapshot.json` (a
 * temporary file, flushed, renamed over the old one, the directory flushed) and the journal emptied.
 * Opening reads the snapshot, then the journal on top of it. A crash leaves every line that was
 * acknowledged: a torn last line (a write the crash cut short, never acknowledged) is dropped; a
 * damaged line before the last is an error that names the file and line, never silently skipped.
 * A crash between the snapshot and the journal's truncation replays lines the snapshot already
 * holds, which changes nothing (each line sets or removes a whole record).
 *
 * Records of the earlier layout (one `<sessionId>.json` per session) are taken in at the first open
 * and their files removed once the snapshot holds them.
 *
 * The directory also keeps the seller's session receipt key (`receipt-key.pem`, 0600; see receiptKey).
 *
 * One process per directory: the records in memory are this process's.
 */
import { mkdir, open, readdir, readFile, rename, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { generateKeyPair } from '../signing.js';
import type { VoucherRecord, VoucherStore } from './sessions.js';

const SAFE = /^[A-Za-z0-9_-]{1,100}$/;
const LOG = 'vouchers.log';
const SNAPSHOT = 'vouchers.snapshot.json';
/** the seller's session receipt key (PKCS#8 PEM, mode 0600), made at the first `receiptKey()` */
const RECEIPT_KEY = 'receipt-key.pem';

/** One line of the journal: a whole record set, or removed. */
type Line = { put: string; record: VoucherRecord } | { delete: string };

export interface FileVoucherStoreOptions {
  /** the journal's size, in bytes, past which the records are written to a snapshot and the journal emptied (default 4 MiB) */
  compactBytes?: number;
}

interface Waiter {
  resolve(): void;
  reject(e: unknown): void;
}

export class FileVoucherStore implements VoucherStore {
  private readonly records = new Map<string, VoucherRecord>();
  private readonly ready: Promise<void>;
  private log: FileHandle | undefined;
  /** the journal's length up to its last acknowledged line */
  private logBytes = 0;
  private readonly compactBytes: number;
  /** lines waiting for the next write, with their callers and what each does to the records once on disk */
  private queued: { text: string; waiter: Waiter; apply: () => void }[] = [];
  private writing = false;
  /** the writes under way, when any */
  private draining: Promise<void> | undefined;
  /** disk flushes of the journal so far (each acknowledges every line written with it) */
  flushes = 0;

  constructor(private readonly dir: string, opts: FileVoucherStoreOptions = {}) {
    this.compactBytes = opts.compactBytes ?? 4 * 1024 * 1024;
    this.ready = this.load();
    // a failure is told to each caller (below), not left unhandled
    this.ready.catch(() => undefined);
  }

  private check(sessionId: string): void {
    if (!SAFE.test(sessionId)) throw new Error(`not a session id: ${JSON.stringify(sessionId)}`);
  }

  async get(sessionId: string): Promise<VoucherRecord | undefined> {
    await this.ready;
    this.check(sessionId);
    const r = this.records.get(sessionId);
    return r === undefined ? undefined : structuredClone(r);
  }

  async put(sessionId: string, record: VoucherRecord): Promise<void> {
    await this.ready;
    this.check(sessionId);
    const copy = structuredClone(record);
    await this.append({ put: sessionId, record: copy }, () => this.records.set(sessionId, copy));
  }

  async delete(sessionId: string): Promise<void> {
    await this.ready;
    this.check(sessionId);
    await this.append({ delete: sessionId }, () => this.records.delete(sessionId));
  }

  async all(): Promise<VoucherRecord[]> {
    await this.ready;
    return [...this.records.values()].map((r) => structuredClone(r));
  }

  private key: Promise<string> | undefined;

  /**
   * The seller's session receipt key, kept in `receipt-key.pem` (0600) beside the journal: made at
   * the first call (written to a temporary file, flushed, renamed, the directory flushed), read at
   * later ones and after a restart, so receipts of sessions opened before it still verify.
   */
  receiptKey(): Promise<string> {
    this.key ??= this.loadKey();
    this.key.catch(() => { this.key = undefined; }); // tried again on a later call
    return this.key;
  }

  private async loadKey(): Promise<string> {
    await this.ready;
    const target = join(this.dir, RECEIPT_KEY);
    const existing = await readFile(target, 'utf8').catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return undefined;
      throw e;
    });
    if (existing !== undefined) {
      if (!existing.includes('-----BEGIN PRIVATE KEY-----')) throw new Error(`${target} holds no PKCS#8 private key: restore it from a backup, or move it aside to make a new one (receipts of open sessions then stop verifying)`);
      return existing;
    }
    const { privateKeyPem } = await generateKeyPair();
    const tmp = `${target}.${process.pid}.tmp`;
    const f = await open(tmp, 'w', 0o600);
    try {
      await f.writeFile(privateKeyPem);
      await f.sync();
    } finally {
      await f.close();
    }
    await rename(tmp, target);
    await this.syncDir();
    return privateKeyPem;
  }

  /** Stops writing: waits for the lines under way and closes the journal. */
  async close(): Promise<void> {
    await this.ready.catch(() => undefined);
    while (this.draining) {
      const d = this.draining;
      await d;
      if (this.draining === d) this.draining = undefined;
    }
    await this.log?.close();
    this.log = undefined;
  }

  /** Queues a line; resolves once it is on disk, and only then changes the records (a `get` sees only what is durable). */
  private append(line: Line, apply: () => void): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queued.push({ text: `${JSON.stringify(line)}\n`, waiter: { resolve, reject }, apply });
      if (!this.writing) this.draining = this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.writing = true;
    try {
      while (this.queued.length > 0) {
        const batch = this.queued;
        this.queued = [];
        const text = batch.map((b) => b.text).join('');
        try {
          const log = this.log;
          if (!log) throw new Error(`the voucher store ${this.dir} is closed`);
          await log.write(text, null, 'utf8'); // appended (the file is open for appending)
          await log.datasync();
          this.flushes++;
          this.logBytes += Buffer.byteLength(text);
        } catch (e) {
          // whatever part of the batch reached the file is cut off, so the next lines follow the last acknowledged one
          await this.log?.truncate(this.logBytes).catch(() => undefined);
          for (const b of batch) b.waiter.reject(e);
          continue;
        }
        for (const b of batch) {
          b.apply();
          b.waiter.resolve();
        }
        if (this.logBytes > this.compactBytes && this.queued.length === 0) await this.compact().catch(() => undefined);
      }
    } finally {
      this.writing = false;
    }
  }

  /** The records to the snapshot, then the journal emptied (called between writes: nothing is appended meanwhile). */
  private async compact(): Promise<void> {
    await this.writeSnapshot();
    await this.log!.truncate(0);
    await this.log!.datasync();
    this.logBytes = 0;
  }

  private async writeSnapshot(): Promise<void> {
    const target = join(this.dir, SNAPSHOT);
    const tmp = `${target}.${process.pid}.tmp`;
    const f = await open(tmp, 'w', 0o600);
    try {
      await f.writeFile(JSON.stringify([...this.records.entries()]));
      await f.sync();
    } finally {
      await f.close();
    }
    await rename(tmp, target);
    await this.syncDir();
  }

  private async syncDir(): Promise<void> {
    const d = await open(this.dir, 'r');
    try {
      await d.sync();
    } finally {
      await d.close();
    }
  }

  private async load(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const snapshot = await readFile(join(this.dir, SNAPSHOT), 'utf8').catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return undefined;
      throw e;
    });
    if (snapshot !== undefined) {
      for (const [id, r] of JSON.parse(snapshot) as [string, VoucherRecord][]) this.records.set(id, r);
    }
    const logPath = join(this.dir, LOG);
    const text = await readFile(logPath, 'utf8').catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return '';
      throw e;
    });
    const end = text.lastIndexOf('\n') + 1; // past the last whole line: what follows is a torn write
    const lines = text.slice(0, end).split('\n');
    lines.pop();
    lines.forEach((raw, i) => {
      let line: Line;
      try {
        line = JSON.parse(raw) as Line;
      } catch {
        throw new Error(`the voucher journal ${logPath} is damaged at line ${i + 1}; keep a copy of the directory, then move the file aside (its records since the last snapshot are then lost)`);
      }
      if ('put' in line) this.records.set(line.put, line.record);
      else this.records.delete(line.delete);
    });
    this.log = await open(logPath, 'a+', 0o600);
    this.logBytes = Buffer.byteLength(text.slice(0, end));
    if (end < text.length) await this.log.truncate(this.logBytes);
    await this.adoptOneFilePerSession();
  }

  /** The earlier layout's files (`<sessionId>.json`): their records into the snapshot, then the files removed. */
  private async adoptOneFilePerSession(): Promise<void> {
    const old = (await readdir(this.dir)).filter((n) => n.endsWith('.json') && n !== SNAPSHOT && SAFE.test(n.slice(0, -'.json'.length)));
    if (old.length === 0) return;
    for (const name of old) {
      const id = name.slice(0, -'.json'.length);
      // a record the journal or snapshot already holds is newer than the old layout's file
      if (!this.records.has(id)) this.records.set(id, JSON.parse(await readFile(join(this.dir, name), 'utf8')) as VoucherRecord);
    }
    await this.writeSnapshot();
    for (const name of old) await rm(join(this.dir, name), { force: true });
    await this.syncDir();
  }
}
