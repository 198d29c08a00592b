/**
 * Typed store errors: what the domain may need to tell apart, whichever backend raised it. The
 * stores translate their driver's codes into these (src/domain never sees a driver code).
 */

/** A unique index refused a row: another row holds that key (often a concurrent writer's). */
export class UniqueViolation extends Error {
  override readonly name = 'UniqueViolation';
  constructor(message: string, readonly constraint: string | undefined, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** A transaction kept colliding with concurrent ones after every retry the store makes. */
export class TransactionConflict extends Error {
  override readonly name = 'TransactionConflict';
  constructor(message: string, readonly attempts: number, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * A movement the store was asked to place (Ledger.place) would have left a wallet's balance,
 * held or available amount negative: refused before anything was appended (src/store/ledger-chain.ts);
 * the database transaction is intact, so the caller may act on the refusal (expire overdue holds,
 * answer INSUFFICIENT_FUNDS) or let it fail the transaction. `wallet`: the wallet's sums before it.
 */
export class MovementRefused extends Error {
  override readonly name = 'MovementRefused';
  constructor(message: string, readonly wallet: { walletId: string; balanceMinor: bigint; heldMinor: bigint; availableMinor: bigint }, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * Transactions.resolve found the transaction no longer authorized (another resolution, of this
 * instance or another, committed first): refused, and the database transaction with it.
 */
export class AlreadyResolved extends Error {
  override readonly name = 'AlreadyResolved';
}

/** The driver's error as a typed store error when it is one, else the error itself. */
export function storeError(e: unknown): unknown {
  if (e instanceof UniqueViolation || e instanceof MovementRefused || e instanceof AlreadyResolved) return e;
  for (let cur = e as { code?: unknown; cause?: unknown; constraint?: unknown; message?: unknown } | undefined; cur; cur = cur.cause as typeof cur) {
    if (cur.code === 'SQLITE_CONSTRAINT_UNIQUE' || cur.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || cur.code === '23505') {
      return new UniqueViolation(String(cur.message ?? 'unique constraint violated'), typeof cur.constraint === 'string' ? cur.constraint : undefined, { cause: e });
    }
    // SQLite's no-replace trigger on the ledger (drizzle/0004) fires before the unique index: the same refusal
    if (cur.code === 'SQLITE_CONSTRAINT_TRIGGER' && String(cur.message).includes('with this id or wallet seq exists')) {
      return new UniqueViolation(String(cur.message), 'ledger_wallet_seq', { cause: e });
    }
    // PostgreSQL's function of drizzle-pg/0007 names its refusal
    if (cur.code === '23514' && cur.constraint === 'transaction_authorized') return new AlreadyResolved(String(cur.message), { cause: e });
  }
  return e;
}

export const isUniqueViolation = (e: unknown): e is UniqueViolation => e instanceof UniqueViolation;

/**
 * The database could not be used: a malformed URL, a refused or failed connection, or a
 * schema newer than this code. `reason` says which; the message never holds a password.
 */
export class DatabaseUnavailable extends Error {
  override readonly name = 'DatabaseUnavailable';
  constructor(message: string, readonly reason: 'url' | 'connect' | 'newer' | 'migrate', options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** A database URL fit for a log line: the password replaced by `***`. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    for (const k of [...u.searchParams.keys()]) if (/pass|secret|key/i.test(k)) u.searchParams.set(k, '***');
    return u.toString();
  } catch {
    // not a URL: keep the scheme at most
    return url.replace(/:\/\/.*$/, '://***');
  }
}
