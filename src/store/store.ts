/**
 * The storage boundary. Domain code sees only these async types (each repository's is derived from
 * its class in ./sql/, written once for both databases), so a PostgreSQL adapter can stand in for
 * SQLite without touching the domain.
 *
 * Rules for callers:
 * - `tx` is one database transaction: everything a money movement writes goes in one.
 * - Do slow non-database work (password hashing, network) outside `tx`/`read`: the
 *   SQLite adapter serialises all access, so time spent inside holds everyone up.
 * - Never call `tx`/`read` from inside another; compose by passing `Repos` down.
 * - A `tx` resolves only once it is durable, and a `read` only once every commit it could
 *   have seen is. `{ unsynced: true }` skips that wait for a read whose result nobody is
 *   shown and that only decides whether to go on (authentication; the wallet key a proof
 *   is checked with): a change still being synced has not been acknowledged to anyone
 *   who could rely on it, and a transaction that follows cannot become durable before
 *   the commits it read from.
 */
import type { makeRepos } from './sql/repos.js';

/**
 * A repository as its callers see it: the public methods of its class in ./sql/ (one class each,
 * for both databases), where their signatures and doc comments are written. Private members are
 * not keys of a class type; fields are left out too.
 */
export type Public<T> = { [K in keyof T as T[K] extends (...args: never) => unknown ? K : never]: T[K] };

/** Every repository (`r.ledger`, `r.transactions`, …): the ones ./sql/repos.ts makes, each as its callers see it. */
export type Repos = { [K in keyof ReturnType<typeof makeRepos>]: Public<ReturnType<typeof makeRepos>[K]> };

export interface ReadOptions {
  /** do not wait for the sync of commits this read may see (see the rules above) */
  unsynced?: boolean;
  /**
   * false: the reads need not see one snapshot (each sees what was committed when it ran), as
   * when they are independent lookups checked again by a later transaction. PostgreSQL then runs
   * them on one connection without BEGIN and COMMIT; SQLite's reads see one snapshot anyway.
   */
  snapshot?: boolean;
}

export interface Store {
  tx<T>(fn: (r: Repos) => Promise<T>): Promise<T>;
  read<T>(fn: (r: Repos) => Promise<T>, opts?: ReadOptions): Promise<T>;
  /**
   * Whether this process runs the fleet duty `name` (the expiry sweeper, the rail job) now. On
   * SQLite always (one process per database file); on PostgreSQL one instance of the fleet
   * holds each duty (an advisory lock) until it stops or dies, then another takes it.
   */
  claimDuty(name: string): Promise<boolean>;
  /**
   * Whether the database answers now: one cheap statement (`SELECT 1`), for the readiness check
   * (`GET /health/ready`); throws when it does not.
   */
  ping(): Promise<void>;
  close(): Promise<void>;
}
