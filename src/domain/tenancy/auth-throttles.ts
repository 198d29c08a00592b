/**
 * Limits of the account routes per email address, beside the per-IP limit of the gateway:
 *
 * - failed-login backoff: after `loginFailuresBeforeBackoff` logins of one address in a row that
 *   did not succeed, that address's logins are refused with 429 RATE_LIMITED (and retry-after)
 *   for `loginBackoffMs`, doubling with each further failure up to `loginBackoffMaxMs`; a
 *   successful login clears it, and a streak is forgotten `loginFailureWindowMs` after its last
 *   attempt (or its block). An attempt counts when it starts, so requests sent at once cannot
 *   slip past the limit together.
 * - reset-mail throttle: one password-reset mail per address per `resetMailIntervalMs`, and at
 *   most `resetMailsPerDay` in 24 hours; "forgot" still answers {ok: true} and sends nothing.
 *
 * An address without an account is counted exactly as one with an account, so neither limit tells
 * them apart. The counts live in the store (auth_throttles), so a fleet counts once, whichever
 * instance a request reaches; no address is kept in clear (the row's key is its SHA-256).
 */
import { createHash } from 'node:crypto';
import { AppError } from '../../core/errors.js';
import type { AuthThrottle } from '../../store/repos/tenancy.js';
import type { Repos } from '../../store/store.js';

export interface AccountLimits {
  /** failed logins of one address in a row before its logins are held back */
  loginFailuresBeforeBackoff: number;
  /** how long a streak of failed logins is remembered after its last attempt or block (ms) */
  loginFailureWindowMs: number;
  /** the first hold-back (ms); each further failure doubles it */
  loginBackoffMs: number;
  /** the longest hold-back (ms) */
  loginBackoffMaxMs: number;
  /** at most one password-reset mail per address this often (ms) */
  resetMailIntervalMs: number;
  /** at most this many password-reset mails per address in 24 hours */
  resetMailsPerDay: number;
  /** active (unrevoked, unexpired) keys a tenant may hold before POST /v1/auth/keys is refused */
  keysPerTenant: number;
}

export const DEFAULT_ACCOUNT_LIMITS: AccountLimits = {
  loginFailuresBeforeBackoff: 5,
  loginFailureWindowMs: 15 * 60_000,
  loginBackoffMs: 30_000,
  loginBackoffMaxMs: 15 * 60_000,
  resetMailIntervalMs: 60_000,
  resetMailsPerDay: 5,
  keysPerTenant: 100,
};

export const DAY_MS = 24 * 60 * 60 * 1000;
/** expired rows each throttle transaction deletes on its way: the table holds about what still counts */
const PRUNE_PER_TAKE = 10;

/** The row of an address (normalised) for one of the two limits: no address in clear. */
export const throttleKey = (kind: 'login' | 'reset_mail', email: string) => `${kind}:${createHash('sha256').update(email).digest('hex')}`;
const rowKey = throttleKey;

function fresh(key: string, now: number): AuthThrottle {
  return { key, count: 0, windowStartedAt: now, lastAt: now, blockedUntil: null, expiresAt: now };
}

/** The hold-back after the `count`th failure in a row (0 before the limit). */
export function loginBackoffMs(count: number, limits: AccountLimits): number {
  const over = count - limits.loginFailuresBeforeBackoff;
  if (over < 0) return 0;
  return Math.min(limits.loginBackoffMaxMs, limits.loginBackoffMs * 2 ** Math.min(over, 40));
}

/** One login attempt on an address's row: refused while it is held back, else counted. */
export function countLoginAttempt(row: AuthThrottle, now: number, limits: AccountLimits): { row: AuthThrottle } | { retryAfterMs: number } {
  if (row.blockedUntil !== null && row.blockedUntil > now) return { retryAfterMs: row.blockedUntil - now };
  const streak = row.count > 0 && now < row.expiresAt ? row : { ...row, count: 0, windowStartedAt: now, blockedUntil: null };
  const count = streak.count + 1;
  const backoff = loginBackoffMs(count, limits);
  const blockedUntil = backoff > 0 ? now + backoff : null;
  return { row: { ...streak, count, lastAt: now, blockedUntil, expiresAt: (blockedUntil ?? now) + limits.loginFailureWindowMs } };
}

/** One reset mail on an address's row: undefined when it is not to be sent, else the row counting it. */
export function countResetMail(row: AuthThrottle, now: number, limits: AccountLimits): AuthThrottle | undefined {
  const day = row.count > 0 && now < row.windowStartedAt + DAY_MS ? row : { ...row, count: 0, windowStartedAt: now };
  if (day.count > 0 && now - day.lastAt < limits.resetMailIntervalMs) return undefined;
  if (day.count >= limits.resetMailsPerDay) return undefined;
  return { ...day, count: day.count + 1, lastAt: now, expiresAt: Math.max(day.windowStartedAt + DAY_MS, now + limits.resetMailIntervalMs) };
}

export class AuthThrottles {
  constructor(private readonly limits: AccountLimits) {}

  /**
   * Counts a login attempt of `email` (normalised) before its password is checked; 429
   * RATE_LIMITED with `retryAfterSeconds` while the address is held back.
   */
  async beginLogin(r: Repos, email: string, now: number): Promise<void> {
    await r.authThrottles.prune(now, PRUNE_PER_TAKE);
    const key = rowKey('login', email);
    const outcome = countLoginAttempt(await r.authThrottles.take(key, fresh(key, now)), now, this.limits);
    if ('retryAfterMs' in outcome) {
      const retryAfterSeconds = Math.ceil(outcome.retryAfterMs / 1000);
      throw new AppError('RATE_LIMITED', `too many failed logins for this email address; retry after ${retryAfterSeconds}s, or reset the password with POST /v1/accounts/password/forgot`, {
        reason: 'login_backoff',
        retryAfterSeconds,
      });
    }
    await r.authThrottles.save(outcome.row);
  }

  /** A login of `email` succeeded: its streak of failures is over. */
  async loginSucceeded(r: Repos, email: string): Promise<void> {
    await r.authThrottles.delete(rowKey('login', email));
  }

  /** Whether a password-reset mail may go to `email` now; counts it when it may. */
  async takeResetMail(r: Repos, email: string, now: number): Promise<boolean> {
    await r.authThrottles.prune(now, PRUNE_PER_TAKE);
    const key = rowKey('reset_mail', email);
    const row = countResetMail(await r.authThrottles.take(key, fresh(key, now)), now, this.limits);
    if (!row) return false;
    await r.authThrottles.save(row);
    return true;
  }
}
