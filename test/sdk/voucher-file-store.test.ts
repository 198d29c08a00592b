/**
 * The file voucher store (packages/sdk/src/seller/voucher-file-store.ts): a journal with group
 * commit, records in memory, a snapshot when the journal grows, what a crash can leave behind, and
 * the seller's receipt key kept beside the journal.
 */
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileVoucherStore } from 'agentpay-sdk/seller/voucher-file-store';
import type { VoucherRecord } from '../../packages/sdk/src/seller/sessions.js';
import type { SessionGrant } from '../../packages/sdk/src/contract/sessions.js';

const dirs: string[] = [];
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });
const newDir = () => { const d = mkdtempSync(join(tmpdir(), 'agentpay-vfs-')); dirs.push(d); return d; };
/** What a new store on the directory reads (closed after). */
async function reopened(dir: string): Promise<VoucherRecord[]> {
  const s = new FileVoucherStore(dir);
  try {
    return await s.all();
  } finally {
    await s.close();
  }
}

/** A record as the checker keeps it (the store does not look inside). */
const record = (sessionId: string, cumulative: number): VoucherRecord => ({
  grant: { sessionId, capMinor: '1000' } as SessionGrant,
  voucher: { sessionId, sequence: cumulative, cumulativeMinor: String(cumulative), requestHash: `sha256:${'0'.repeat(64)}`, signature: 'sig' },
  spentMinor: String(cumulative),
  claimedMinor: '0',
});

describe('FileVoucherStore', () => {
  it('keeps what was put and removes what was deleted, across a reopen', async () => {
    const dir = newDir();
    const a = new FileVoucherStore(dir);
    await a.put('ses_1', record('ses_1', 10));
    await a.put('ses_2', record('ses_2', 20));
    await a.put('ses_1', record('ses_1', 30));
    await a.delete('ses_2');
    expect(await a.get('ses_1')).toEqual(record('ses_1', 30));
    expect(await a.get('ses_2')).toBeUndefined();
    await a.close();
    const b = new FileVoucherStore(dir);
    expect(await b.all()).toEqual([record('ses_1', 30)]);
    expect(statSync(join(dir, 'vouchers.log')).mode & 0o777).toBe(0o600);
    await b.close();
  });

  it('writes the lines of concurrent calls with one flush, and each call resolves once its line is on disk', async () => {
    const dir = newDir();
    const s = new FileVoucherStore(dir);
    await s.put('ses_warm', record('ses_warm', 1));
    const before = s.flushes;
    await Promise.all(Array.from({ length: 200 }, (_, i) => s.put(`ses_${i}`, record(`ses_${i}`, i))));
    // the first call's write, then one for everything queued behind it (a slow disk may split it once more)
    expect(s.flushes - before).toBeGreaterThanOrEqual(1);
    expect(s.flushes - before).toBeLessThanOrEqual(4);
    const lines = readFileSync(join(dir, 'vouchers.log'), 'utf8').trim().split('\n');
    expect(lines).toHaveLength(201);
    expect((await reopened(dir)).length).toBe(201);
    await s.close();
  });

  it('gives a get only what is on disk: a put not yet written is not seen', async () => {
    const dir = newDir();
    const s = new FileVoucherStore(dir);
    await s.put('ses_1', record('ses_1', 10));
    const writing = s.put('ses_1', record('ses_1', 20));
    expect((await s.get('ses_1'))!.spentMinor).toBe('10');
    await writing;
    expect((await s.get('ses_1'))!.spentMinor).toBe('20');
    await s.close();
  });

  it('drops a torn last line (a write a crash cut short) and appends after the last whole one', async () => {
    const dir = newDir();
    const s = new FileVoucherStore(dir);
    await s.put('ses_1', record('ses_1', 10));
    await s.close();
    appendFileSync(join(dir, 'vouchers.log'), '{"put":"ses_2","record":{"gra');
    const t = new FileVoucherStore(dir);
    expect(await t.all()).toEqual([record('ses_1', 10)]);
    await t.put('ses_3', record('ses_3', 30));
    await t.close();
    expect((await reopened(dir)).map((r) => r.spentMinor).sort()).toEqual(['10', '30']);
  });

  it('refuses to open a journal damaged before its last line, naming the file and the line', async () => {
    const dir = newDir();
    const s = new FileVoucherStore(dir);
    await s.put('ses_1', record('ses_1', 10));
    await s.put('ses_2', record('ses_2', 20));
    await s.close();
    const path = join(dir, 'vouchers.log');
    const lines = readFileSync(path, 'utf8').split('\n');
    lines[0] = lines[0]!.slice(0, 20);
    writeFileSync(path, lines.join('\n'));
    await expect(reopened(dir)).rejects.toThrow(`the voucher journal ${path} is damaged at line 1`);
  });

  it('writes a snapshot and empties the journal past compactBytes; a reopen reads both', async () => {
    const dir = newDir();
    const s = new FileVoucherStore(dir, { compactBytes: 2_000 });
    for (let i = 0; i < 40; i++) await s.put(`ses_${i % 7}`, record(`ses_${i % 7}`, i));
    await s.delete('ses_0');
    expect(existsSync(join(dir, 'vouchers.snapshot.json'))).toBe(true);
    expect(statSync(join(dir, 'vouchers.log')).size).toBeLessThan(2_000);
    const want = (await s.all()).sort((x, y) => x.grant.sessionId.localeCompare(y.grant.sessionId));
    expect(want.map((r) => r.grant.sessionId)).toEqual(['ses_1', 'ses_2', 'ses_3', 'ses_4', 'ses_5', 'ses_6']);
    await s.close();
    const again = (await reopened(dir)).sort((x, y) => x.grant.sessionId.localeCompare(y.grant.sessionId));
    expect(again).toEqual(want);
  });

  it('takes in the records of the earlier layout (one file per session) and removes their files', async () => {
    const dir = newDir();
    writeFileSync(join(dir, 'ses_old.json'), JSON.stringify(record('ses_old', 40)));
    const s = new FileVoucherStore(dir);
    expect(await s.all()).toEqual([record('ses_old', 40)]);
    expect(existsSync(join(dir, 'ses_old.json'))).toBe(false);
    await s.close();
    expect(await reopened(dir)).toEqual([record('ses_old', 40)]);
  });

  it('keeps the seller\'s receipt key in the directory (0600): the same key after a reopen; a damaged key file is named', async () => {
    const dir = newDir();
    const s = new FileVoucherStore(dir);
    const [key, again] = await Promise.all([s.receiptKey(), s.receiptKey()]);
    expect(key).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(again).toBe(key);
    expect(statSync(join(dir, 'receipt-key.pem')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, 'receipt-key.pem'), 'utf8')).toBe(key);
    await s.close();
    const t = new FileVoucherStore(dir);
    expect(await t.receiptKey()).toBe(key);
    await t.close();
    writeFileSync(join(dir, 'receipt-key.pem'), 'not a key');
    const u = new FileVoucherStore(dir);
    await expect(u.receiptKey()).rejects.toThrow(/receipt-key\.pem holds no PKCS#8 private key/);
    await u.close();
  });

  it('refuses a session id that is not one, before writing anything', async () => {
    const s = new FileVoucherStore(newDir());
    await expect(s.put('../escape', record('x', 1))).rejects.toThrow('not a session id');
    expect(s.flushes).toBe(0);
    await s.close();
  });
});
