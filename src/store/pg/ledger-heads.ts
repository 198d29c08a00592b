/**
 * The ledger heads this process appended, and whose turn it is to append to a wallet: what lets a
 * PostgreSQL transaction place a movement without waiting for the database while it holds a wallet.
 *
 * The lock path (Ledger in ../sql/wallets.ts: `ledger_head(s)_for_update`) locks a wallet's row,
 * waits for its head, computes the entries (ledger-chain.ts) and sends them with the COMMIT: the
 * wallet stays locked for a round trip AND the gateway's turn to compute. Here instead:
 *
 * - a transaction takes the wallet's *turn* in this process (a FIFO per wallet): two transactions
 *   of this process never build on one head;
 * - it builds on the newest head this process made for the wallet (read once, without a lock, when
 *   the process has none), so placing a movement costs no round trip;
 * - it passes the turn on as soon as it has computed its entries (`publish`), before anything is
 *   sent: the next transaction builds on that head, in flight until the first one ends. A hot wallet
 *   (the platform's, a busy seller's) is held for the time it takes to compute its entries, not for
 *   a round trip and the event loop's delays on both sides (docs/performance.md, "Chained turns");
 * - the database orders and checks every head built on: the entries go with `ledger_heads_expect`
 *   (drizzle-pg/0016), which waits for the transaction whose head it built on to end, locks the
 *   wallet's row, and refuses (40001: PgStore.tx runs the transaction again) unless the wallet's
 *   last entry is the one it built on. The unique (wallet_id, seq) index stays as the last guard.
 *
 * A transaction that *decides* on a head (Ledger.last: the domain reads a balance) takes the turn
 * only when nothing of this process is in flight on the wallet, and reads the head afresh. A
 * transaction that fails forgets its wallets' heads (they are read again); when its expectation
 * failed on a head this process had committed (another instance appended), the wallet is treated as
 * *shared* for a while: its next transactions take the lock path, as every instance of a busy fleet
 * does for a wallet all of them write. A turn waits at most `waitMs`: a transaction that holds a
 * turn may wait on a row lock of one that waits for the turn (PostgreSQL cannot see that cycle); past
 * the wait the second takes the lock path instead.
 */
import type { LedgerEntry } from '../repos/wallets.js';

interface Waiter {
  /** waits also for this process's transactions in flight on the wallet (a decision on its head) */
  strict: boolean;
  go: () => void;
}

interface Turn {
  held: boolean;
  /** transactions waiting for the wallet, first come first served */
  queue: Waiter[];
}

/** What a transaction holds (PgStore.tx ends it): the turns it took, and the wallets it has in flight once its COMMIT is sent. */
export interface HeldTurns {
  turns: string[];
  /** wallets this transaction appended to and sent its COMMIT for, not yet answered */
  published: string[];
}

export class LedgerHeads {
  /** the newest head this process made for each wallet it knows: committed, or in flight */
  private readonly heads = new Map<string, LedgerEntry | undefined>();
  private readonly turns = new Map<string, Turn>();
  /** transactions of this process with a COMMIT in flight, by wallet */
  private readonly inflight = new Map<string, number>();
  private readonly sharedUntil = new Map<string, number>();
  /** the heads this process published lately (a collision on one of them is not another instance's doing) */
  private readonly made = new Set<string>();

  constructor(
    private readonly opts: { waitMs: number; sharedMs: number; now: () => number } = { waitMs: 1_000, sharedMs: 10_000, now: () => performance.now() },
  ) {}

  /** Whether the wallet's head is known: then `head` is the newest this process made for it. */
  knows(walletId: string): boolean {
    return this.heads.has(walletId);
  }

  head(walletId: string): LedgerEntry | undefined {
    return this.heads.get(walletId);
  }

  /** Whether a transaction of this process has sent its COMMIT for the wallet, unanswered yet. */
  inFlight(walletId: string): boolean {
    return (this.inflight.get(walletId) ?? 0) > 0;
  }

  /**
   * Takes the turn of each wallet in `walletIds` (in that order) for `t`, waiting behind this
   * process's other transactions (`strict`: and for those in flight on it to be answered); answers
   * the wallets it took. A wallet marked shared, or whose turn did not come within the wait, is left
   * out: its caller takes the lock path for it.
   */
  async take(t: HeldTurns, walletIds: readonly string[], strict = false): Promise<string[]> {
    const taken: string[] = [];
    for (const w of walletIds) {
      if (t.turns.includes(w)) {
        taken.push(w);
        continue;
      }
      if (this.isShared(w) || !(await this.wait(w, strict))) continue;
      if (this.isShared(w)) {
        // found shared while this transaction waited (the one before it collided): the turn goes on, unused
        this.pass(w);
        continue;
      }
      t.turns.push(w);
      taken.push(w);
    }
    return taken;
  }

  /**
   * `t` appended to the wallet, whose turn it holds: `head` (its newest entry there) becomes this
   * process's newest head for the wallet, in flight until `t` ends, and the turn passes on at once
   * (the next transaction builds on `head`; ledger_heads_expect orders the two in the database).
   */
  publish(t: HeldTurns, walletId: string, head: LedgerEntry | undefined): void {
    this.heads.set(walletId, head);
    if (head) {
      this.made.add(head.id);
      if (this.made.size > 4096) this.made.delete(this.made.values().next().value!);
    }
    if (!t.published.includes(walletId)) {
      this.inflight.set(walletId, (this.inflight.get(walletId) ?? 0) + 1);
      t.published.push(walletId);
    }
    const i = t.turns.indexOf(walletId);
    if (i >= 0) {
      t.turns.splice(i, 1);
      this.pass(walletId);
    }
  }

  /** `t` is sending its COMMIT: the heads of the wallets it only read (`heads`, as it saw them) become this process's, and its turns pass on. */
  sent(t: HeldTurns, heads: ReadonlyMap<string, LedgerEntry | undefined>): void {
    for (const w of t.turns) {
      if (heads.has(w)) this.heads.set(w, heads.get(w));
      else this.heads.delete(w);
    }
    this.end(t);
  }

  /** `t`'s COMMIT was answered: its heads are the database's. */
  committed(t: HeldTurns): void {
    this.land(t);
    this.end(t);
  }

  /**
   * `t` did not commit (or may not have: a connection lost during COMMIT): its wallets' heads are
   * forgotten (read again next time; the transactions built on them fail their expectation); a
   * wallet another instance moved (`collided`: the head the database found is not one this process
   * made, or unknown) is shared for a while. Ends its turns.
   */
  abandoned(t: HeldTurns, collided: Collision | undefined): void {
    for (const w of [...t.turns, ...t.published]) this.heads.delete(w);
    if (collided !== undefined) {
      this.heads.delete(collided.walletId);
      if (collided.found === undefined || !this.made.has(collided.found)) this.sharedUntil.set(collided.walletId, this.opts.now() + this.opts.sharedMs);
    }
    this.land(t);
    this.end(t);
  }

  /** `t`'s wallets in flight are answered: a decision that waited for them may go. */
  private land(t: HeldTurns): void {
    for (const w of t.published) {
      const n = (this.inflight.get(w) ?? 1) - 1;
      if (n > 0) {
        this.inflight.set(w, n);
      } else {
        this.inflight.delete(w);
        this.grant(w);
      }
    }
    t.published.length = 0;
  }

  private isShared(walletId: string): boolean {
    const until = this.sharedUntil.get(walletId);
    if (until === undefined) return false;
    if (this.opts.now() < until) return true;
    this.sharedUntil.delete(walletId);
    return false;
  }

  private wait(walletId: string, strict: boolean): Promise<boolean> {
    let turn = this.turns.get(walletId);
    if (!turn) this.turns.set(walletId, (turn = { held: false, queue: [] }));
    if (!turn.held && turn.queue.length === 0 && !(strict && this.inFlight(walletId))) {
      turn.held = true;
      return Promise.resolve(true);
    }
    const t = turn;
    return new Promise<boolean>((resolve) => {
      const waiter: Waiter = {
        strict,
        go: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        const i = t.queue.indexOf(waiter);
        if (i >= 0) t.queue.splice(i, 1);
        resolve(false);
        if (i === 0) this.grant(walletId); // it may have kept those behind it waiting
      }, this.opts.waitMs);
      t.queue.push(waiter);
    });
  }

  /** Passes each of `t`'s turns on. */
  private end(t: HeldTurns): void {
    for (const w of t.turns) this.pass(w);
    t.turns.length = 0;
  }

  /** Frees the wallet's turn and gives it to its next waiter, if that one may go. */
  private pass(walletId: string): void {
    const turn = this.turns.get(walletId);
    if (!turn) return;
    turn.held = false;
    this.grant(walletId);
  }

  private grant(walletId: string): void {
    const turn = this.turns.get(walletId);
    if (!turn || turn.held) return;
    const next = turn.queue[0];
    if (!next) {
      this.turns.delete(walletId);
      return;
    }
    if (next.strict && this.inFlight(walletId)) return; // granted when the last in flight lands
    turn.queue.shift();
    turn.held = true;
    next.go();
  }

  /**
   * The wallet a head collided on: a unique violation of `ledger_wallet_seq` (PostgreSQL's detail:
   * `Key (wallet_id, seq)=(w, 5) already exists.`), or a refused expectation of ledger_heads_expect
   * (`ledger head (wallet_id)=(w) found (led_...)`, `found` the head it found instead).
   */
  static collision(e: unknown): Collision | undefined {
    for (let cur = e as { code?: unknown; constraint?: unknown; detail?: unknown; cause?: unknown } | undefined; cur; cur = cur.cause as typeof cur) {
      if (typeof cur.detail !== 'string') continue;
      if (cur.constraint === 'ledger_wallet_seq') {
        const m = /\(wallet_id, seq\)=\((.*), \d+\)/.exec(cur.detail);
        if (m) return { walletId: m[1]! };
      }
      if (cur.code === '40001') {
        const m = /^ledger head \(wallet_id\)=\((.*)\) found \((.*)\)$/.exec(cur.detail);
        if (m) return { walletId: m[1]!, found: m[2] || undefined };
      }
    }
    return undefined;
  }
}

/** A wallet whose head a transaction built on was not the database's: `found`, the head found instead (none: unknown). */
export interface Collision {
  walletId: string;
  found?: string;
}
