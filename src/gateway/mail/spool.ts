/**
 * The `Mailer` of a gateway configured with an SMTP server. A message is first written to
 * the spool, DATA_DIR/mail-spool/ (one 0600 file per message: it carries a token), then
 * sent in the background; its file is removed once the server has accepted it. So the
 * request that asked for the mail does not wait for, or fail with, the mail server: a
 * refused or slow connection leaves the message in the spool, retried with exponential
 * backoff (5 s doubling to 15 min, for as long as it takes), and a restart sends what the
 * spool holds. A message the server refuses for good (a 5xx answer, e.g. an unknown
 * recipient) is moved to mail-spool/failed/ and logged, never dropped. Delivery is at
 * least once: a crash between the server's acceptance and the file's removal sends it again.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from '../../core/clock.js';
import { ensurePrivateDir, fsyncDir, writeFileAtomic } from '../../core/files.js';
import type { Mailer, MailMessage } from '../../domain/platform/mailer.js';
import type { MailTransport } from './smtp.js';

export const mailSpoolDir = (dataDir: string) => join(dataDir, 'mail-spool');

/** One spooled message as its file holds it. */
export interface SpooledMail {
  id: string;
  message: MailMessage;
  /** epoch ms the message was spooled */
  queuedAt: number;
  attempts: number;
  /** epoch ms of the next attempt */
  nextAttemptAt: number;
  /** why the last attempt failed (no secret: scrubbed by the caller's `describe`) */
  lastError?: string;
}

export interface SpoolLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Timers the spool waits with; tests pass their own and call `deliverDue()` themselves. */
export interface SpoolTimers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const realTimers: SpoolTimers = {
  set: (fn, ms) => setTimeout(fn, ms).unref(),
  clear: (h) => clearTimeout(h as NodeJS.Timeout),
};

export interface MailSpoolOptions {
  dir: string;
  transport: MailTransport;
  from: string;
  clock: Clock;
  log?: SpoolLog;
  timers?: SpoolTimers;
  /** first retry delay (ms, default 5 s); each further one doubles, up to `maxRetryMs` */
  retryMs?: number;
  maxRetryMs?: number;
  /** error text as it may be logged and kept (the SMTP password taken out) */
  describe?: (err: unknown) => string;
}

/** The delay before attempt `attempts + 1`, after `attempts` failures. */
export function retryDelay(attempts: number, base: number, max: number): number {
  return Math.min(max, base * 2 ** Math.min(attempts - 1, 30));
}

/** A 5xx answer of the server: it will not take this message however often it is sent. */
function isPermanent(err: unknown): boolean {
  const code = (err as { responseCode?: unknown } | null)?.responseCode;
  return typeof code === 'number' && code >= 500 && code < 600;
}

export class MailSpool implements Mailer {
  private readonly dir: string;
  private readonly failedDir: string;
  private readonly timers: SpoolTimers;
  private readonly retryMs: number;
  private readonly maxRetryMs: number;
  private running: Promise<void> | undefined;
  private again = false;
  private timer: unknown;
  private closed = false;
  private seq = 0;

  constructor(private readonly opts: MailSpoolOptions) {
    this.dir = opts.dir;
    this.failedDir = join(opts.dir, 'failed');
    this.timers = opts.timers ?? realTimers;
    this.retryMs = opts.retryMs ?? 5_000;
    this.maxRetryMs = opts.maxRetryMs ?? 15 * 60_000;
    ensurePrivateDir(this.dir);
  }

  /** Spools the message (durable when this resolves) and starts sending it in the background. */
  async send(message: MailMessage): Promise<void> {
    const now = this.opts.clock.now();
    // sortable: spool time, then order within this process
    const id = `${now.toString().padStart(15, '0')}-${(this.seq++).toString().padStart(6, '0')}-${randomBytes(4).toString('hex')}`;
    this.write({ id, message, queuedAt: now, attempts: 0, nextAttemptAt: now });
    this.kick();
  }

  /** Sends what a previous run left in the spool, now, whatever its backoff said. */
  start(): void {
    for (const m of this.pending()) if (m.nextAttemptAt > this.opts.clock.now()) this.write({ ...m, nextAttemptAt: this.opts.clock.now() });
    this.kick();
  }

  /** The messages waiting, oldest first. */
  pending(): SpooledMail[] {
    let names: string[];
    try {
      names = readdirSync(this.dir).filter((n) => n.endsWith('.json') && !n.startsWith('.'));
    } catch {
      return [];
    }
    const out: SpooledMail[] = [];
    for (const name of names.sort()) {
      try {
        out.push(JSON.parse(readFileSync(join(this.dir, name), 'utf8')) as SpooledMail);
      } catch {
        // removed meanwhile (sent): nothing to do
      }
    }
    return out;
  }

  /**
   * Tries every message whose time has come, oldest first; resolves when this round is
   * done. One round runs at a time: a call during a round runs another one after it.
   */
  deliverDue(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    const round = (async () => {
      do {
        this.again = false;
        await this.round();
      } while (this.again && !this.closed);
    })().finally(() => {
      this.running = undefined;
      this.schedule();
    });
    this.running = round;
    return round;
  }

  /**
   * Stops the timer and gives the message being sent up to `graceMs` to finish; what is left
   * stays spooled for the next start (a message whose send was under way may go out twice).
   */
  async close(graceMs = 2_000): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) this.timers.clear(this.timer);
    this.timer = undefined;
    if (this.running) {
      let t: NodeJS.Timeout | undefined;
      await Promise.race([this.running.catch(() => undefined), new Promise((res) => (t = setTimeout(res, graceMs)))]);
      clearTimeout(t);
    }
    this.opts.transport.close();
  }

  private kick(): void {
    if (this.closed) return;
    void this.deliverDue().catch((err) => this.opts.log?.error({ err }, 'mail spool round failed; tried again at the next message or restart'));
  }

  private async round(): Promise<void> {
    for (const m of this.pending()) {
      if (this.closed) return;
      const now = this.opts.clock.now();
      if (m.nextAttemptAt > now) continue;
      const { message } = m;
      try {
        await this.opts.transport.send({ from: this.opts.from, to: message.to, subject: message.subject, text: message.text });
      } catch (err) {
        const attempts = m.attempts + 1;
        const why = this.opts.describe ? this.opts.describe(err) : String((err as Error)?.message ?? err);
        if (isPermanent(err)) {
          renameSync(this.path(m.id), this.failedPath(m.id));
          fsyncDir(this.dir);
          this.opts.log?.error({ mailId: m.id, kind: message.kind, attempts, error: why }, `the mail server refused a ${message.kind} message for good; kept in ${this.failedDir}`);
          continue;
        }
        const nextAttemptAt = this.opts.clock.now() + retryDelay(attempts, this.retryMs, this.maxRetryMs);
        this.write({ ...m, attempts, nextAttemptAt, lastError: why });
        this.opts.log?.warn(
          { mailId: m.id, kind: message.kind, attempts, nextAttemptAt: new Date(nextAttemptAt).toISOString(), error: why },
          'mail not sent yet; it stays in the spool and is retried',
        );
        continue;
      }
      rmSync(this.path(m.id), { force: true });
      this.opts.log?.info({ mailId: m.id, kind: message.kind, attempts: m.attempts + 1 }, 'mail sent');
    }
  }

  /** Arms the timer for the earliest retry, if any message waits. */
  private schedule(): void {
    if (this.closed) return;
    if (this.timer !== undefined) this.timers.clear(this.timer);
    this.timer = undefined;
    const waiting = this.pending();
    if (!waiting.length) return;
    const next = Math.min(...waiting.map((m) => m.nextAttemptAt));
    this.timer = this.timers.set(() => {
      this.timer = undefined;
      this.kick();
    }, Math.max(0, next - this.opts.clock.now()));
  }

  private write(m: SpooledMail): void {
    writeFileAtomic(this.path(m.id), JSON.stringify(m) + '\n', { mode: 0o600 });
  }

  private path(id: string): string {
    return join(this.dir, `${id}.json`);
  }

  private failedPath(id: string): string {
    ensurePrivateDir(this.failedDir);
    return join(this.failedDir, `${id}.json`);
  }
}
