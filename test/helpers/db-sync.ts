/**
 * Synchronous SQL on a test gateway's PostgreSQL database, for the test helpers written against
 * better-sqlite3's synchronous API (`prepare(sql).get/all/run`): a worker thread runs the query
 * and this thread waits for it (Atomics.wait), so those helpers work unchanged on both backends.
 * `?` placeholders become `$n`; `rowid` of a table without one becomes `ctid` (insertion order of
 * an append-only table); values come back as SQLite's safe integers give them (bigint, 1n/0n).
 * Tests only.
 */
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';

type Answer = { rows: Record<string, unknown>[]; changes: number } | { error: string; code?: string };

export interface SyncStatement {
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): { changes: number };
}

/** Never notified: waiting on it is a pause of the given length. */
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

export class SyncPg {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly flag = new Int32Array(new SharedArrayBuffer(4));

  constructor(url: string) {
    const { port1, port2 } = new MessageChannel();
    this.worker = new Worker(new URL('./db-sync-worker.mjs', import.meta.url), { workerData: { url, port: port2, shared: this.flag.buffer }, transferList: [port2] });
    this.worker.unref();
    this.port = port1;
  }

  query(sql: string, params: unknown[] = []): { rows: Record<string, unknown>[]; changes: number } {
    let n = 0;
    const text = sql.replace(/\?/g, () => `$${++n}`);
    const values = params.map((p) => (typeof p === 'bigint' ? p.toString() : p));
    let answer = this.ask(text, values);
    if ('error' in answer && /column "rowid" does not exist/.test(answer.error)) answer = this.ask(text.replace(/\browid\b/g, 'ctid'), values);
    if ('error' in answer) throw Object.assign(new Error(answer.error), { code: answer.code });
    // PostgreSQL folds unquoted aliases to lower case (frozen_by AS frozenBy -> frozenby): give them back as written
    const aliases = [...sql.matchAll(/\bAS\s+([A-Za-z_]\w*)/g)].map((m) => m[1]!).filter((a) => a !== a.toLowerCase());
    if (aliases.length) {
      for (const row of answer.rows) {
        for (const a of aliases) {
          const low = a.toLowerCase();
          if (low in row) {
            row[a] = row[low];
            delete row[low];
          }
        }
      }
    }
    return answer;
  }

  private asked = 0;

  /**
   * One query, answered synchronously. Each answer carries the id of its question: the flag can be
   * seen before the answer reaches this thread's port (under load it was, once, and every later
   * question then read the answer of the one before), so the port is polled until the answer with
   * this id arrives, and an older one is dropped.
   */
  private ask(sql: string, params: unknown[]): Answer {
    const id = ++this.asked;
    Atomics.store(this.flag, 0, 0);
    this.worker.postMessage({ id, sql, params });
    const deadline = Date.now() + 60_000;
    if (Atomics.wait(this.flag, 0, 0, 60_000) === 'timed-out') throw new Error(`no answer from PostgreSQL in 60 s: ${sql}`);
    for (;;) {
      const m = receiveMessageOnPort(this.port) as { message: { id: number; answer: Answer } } | undefined;
      if (m?.message.id === id) return m.message.answer;
      if (m) continue; // the answer to an earlier question that gave up waiting
      if (Date.now() > deadline) throw new Error(`the PostgreSQL worker's answer never arrived: ${sql}`);
      Atomics.wait(PAUSE, 0, 0, 1); // a 1 ms pause: the answer is on its way between threads
    }
  }

  /** better-sqlite3's shape, for helpers that call prepare(sql).get/all/run */
  prepare(sql: string): SyncStatement {
    return {
      get: (...p) => this.query(sql, p).rows[0],
      all: (...p) => this.query(sql, p).rows,
      run: (...p) => ({ changes: this.query(sql, p).changes }),
    };
  }

  close(): Promise<number> {
    return this.worker.terminate();
  }
}
