/**
 * A voucher store in one directory (Node): one JSON file per session, written to a temporary
 * file, flushed to disk and renamed over the old one, so `put` resolves only once the record is
 * durable and a crash leaves the old record or the new one, never half of one.
 */
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { VoucherRecord, VoucherStore } from './sessions.js';

const SAFE = /^[A-Za-z0-9_-]{1,100}$/;

export class FileVoucherStore implements VoucherStore {
  private ready: Promise<unknown>;

  constructor(private readonly dir: string) {
    this.ready = mkdir(dir, { recursive: true, mode: 0o700 });
  }

  private path(sessionId: string): string {
    if (!SAFE.test(sessionId)) throw new Error(`not a session id: ${JSON.stringify(sessionId)}`);
    return join(this.dir, `${sessionId}.json`);
  }

  async get(sessionId: string): Promise<VoucherRecord | undefined> {
    await this.ready;
    try {
      return JSON.parse(await readFile(this.path(sessionId), 'utf8')) as VoucherRecord;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
  }

  async put(sessionId: string, record: VoucherRecord): Promise<void> {
    await this.ready;
    const target = this.path(sessionId);
    const tmp = `${target}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    const f = await open(tmp, 'w', 0o600);
    try {
      await f.writeFile(JSON.stringify(record));
      await f.sync();
    } finally {
      await f.close();
    }
    await rename(tmp, target);
    const d = await open(this.dir, 'r');
    try {
      await d.sync();
    } finally {
      await d.close();
    }
  }

  async delete(sessionId: string): Promise<void> {
    await this.ready;
    await rm(this.path(sessionId), { force: true });
  }

  async all(): Promise<VoucherRecord[]> {
    await this.ready;
    const out: VoucherRecord[] = [];
    for (const name of await readdir(this.dir)) {
      if (!name.endsWith('.json')) continue;
      const rec = await this.get(name.slice(0, -'.json'.length));
      if (rec) out.push(rec);
    }
    return out;
  }
}
