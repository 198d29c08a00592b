/**
 * The ledger heads this process appended, and whose turn it is to append to a wallet: what lets a
 * PostgreSQL transaction place a movement without waiting for the database while it holds a wallet.
 *
 * The lock path (PgLedger: `ledger_head(s)_for_update`) locks a wallet's row, waits for its head,
 * computes the entries (ledger-chain.ts) and sends them with the COMMIT: the wallet stays locked for
 * a round trip AND the gateway's turn to compute, which under load is most of the time (measured in
 * docs/performance.md, "Part 4": the platform's and a busy seller's wallets, held by every
 * completion, capped paid calls/s at about 0.65x of the commit before). Here instead:
 *
 * - a transaction takes the wallet's *turn* in this process (a FIFO per wallet, held until its
 *   COMMIT is answered): two transactions of this process never build on one head;
 * - it builds on the head this process last committed for the wallet (read once, without a lock,
 *   when the process has none), so placing a movement costs no round trip;
 * - the database checks the head: the entries go in with `seq` = head + 1 under the unique index
 *   `ledger_wallet_seq` (and the gap trigger of drizzle-pg/0001), so an entry built on a stale head
 *   (another instance appended since) is refused (23505); PgStore.tx runs the transaction again,
 *   and this process forgets that wallet's head and treats the wallet as *shared* for a while:
 *   its next transactions take the lock path, as every instance of a busy fleet does for a wallet
 *   all of them write.
 *
 * Heads are kept only as a COMMIT left them (never ahead of the database), so a kept head is
 * either the wallet's head or behind it, and behind is caught by the unique index. A turn waits at
 * most `waitMs`: a transaction that holds a turn may wait on a row lock of one that waits for the
 * turn (PostgreSQL cannot see that cycle); past the wait the second takes the lock path instead.
 */
import type { LedgerEntry } from '../repos/wallets.js';

interface Turn {
  /** transactions waiting for the wallet, first come first served */
  queue: (() => void)[];
}

/** What a transaction holds: the turns it took (PgLedger records them here; PgStore.tx ends them). */
export interface HeldTurns {
  turns: string[];
}

export class LedgerHeads {
  private readonly heads = new Map<string, LedgerEntry | undefined>();
  private readonly turns = new Map<string, Turn>();
  private readonly sharedUntil = new Map<string, number>();

  constructor(
    private readonly opts: { waitMs: number; sharedMs: number; now: () => number } = { waitMs: 1_000, sharedMs: 10_000, now: () => performance.now() },
  ) {}

  /** Whether the wallet's head is known: then `head` is what this process last committed for it. */
  knows(walletId: string): boolean {
    return this.heads.has(walletId);
  }

  head(walletId: string): LedgerEntry | undefined {
    return this.heads.get(walletId);
  }

  /**
   * Takes the turn of each wallet in `walletIds` (in that order) for `t`, waiting behind this
   * process's other transactions; answers the wallets it took. A wallet marked shared, or whose
   * turn did not come within the wait, is left out: its caller takes the lock path for it.
   */
  async take(t: HeldTurns, walletIds: readonly string[]): Promise<string[]> {
    const taken: string[] = [];
    for (const w of walletIds) {
      if (t.turns.includes(w)) {
        taken.push(w);
        continue;
      }
      if (this.isShared(w) || !(await this.wait(w))) continue;
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

  /** `t` committed: the heads it leaves (`heads`, as the transaction saw them last) become this process's. Ends its turns. */
  committed(t: HeldTurns, heads: ReadonlyMap<string, LedgerEntry | undefined> | undefined): void {
    for (const w of t.turns) {
      if (heads?.has(w)) this.heads.set(w, heads.get(w));
      else this.heads.delete(w);
    }
    this.end(t);
  }

  /**
   * `t` did not commit (or may not have: a connection lost during COMMIT): its wallets' heads are
   * forgotten (read again next time); a wallet a stale head collided on (`collidedOn`) is shared
   * for a while. Ends its turns.
   */
  abandoned(t: HeldTurns, collidedOn: string | undefined): void {
    for (const w of t.turns) this.heads.delete(w);
    if (collidedOn !== undefined) {
      this.heads.delete(collidedOn);
      this.sharedUntil.set(collidedOn, this.opts.now() + this.opts.sharedMs);
    }
    this.end(t);
  }

  private isShared(walletId: string): boolean {
    const until = this.sharedUntil.get(walletId);
    if (until === undefined) return false;
    if (this.opts.now() < until) return true;
    this.sharedUntil.delete(walletId);
    return false;
  }

  private wait(walletId: string): Promise<boolean> {
    const turn = this.turns.get(walletId);
    if (!turn) {
      this.turns.set(walletId, { queue: [] });
      return Promise.resolve(true);
    }
    return new Promise<boolean>((resolve) => {
      const go = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        const i = turn.queue.indexOf(go);
        if (i >= 0) turn.queue.splice(i, 1);
        resolve(false);
      }, this.opts.waitMs);
      turn.queue.push(go);
    });
  }

  /** Passes each of `t`'s turns on. */
  private end(t: HeldTurns): void {
    for (const w of t.turns) this.pass(w);
    t.turns.length = 0;
  }

  /** Passes the wallet's turn to its next waiter, or frees it. */
  private pass(walletId: string): void {
    const turn = this.turns.get(walletId);
    if (!turn) return;
    const next = turn.queue.shift();
    if (next) next();
    else this.turns.delete(walletId);
  }

  /** the wallet a unique violation of `ledger_wallet_seq` names (PostgreSQL's detail: `Key (wallet_id, seq)=(w, 5) already exists.`) */
  static collision(e: unknown): string | undefined {
    for (let cur = e as { constraint?: unknown; detail?: unknown; cause?: unknown } | undefined; cur; cur = cur.cause as typeof cur) {
      if (cur.constraint === 'ledger_wallet_seq' && typeof cur.detail === 'string') {
        const m = /\(wallet_id, seq\)=\((.*), \d+\)/.exec(cur.detail);
        if (m) return m[1];
      }
    }
    return undefined;
  }
}
