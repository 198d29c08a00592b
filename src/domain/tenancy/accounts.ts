/**
 * Accounts: the person (email + password) behind a tenant. Logging in mints a new
 * API key that expires after 30 days; a forgotten password is replaced through a
 * mailed one-time token, and the reset revokes every key the account's logins issued
 * (and the keys those minted). Neither route discloses whether an email has an account,
 * by its answer or by its time: login answers the same 401 for an unknown email and a
 * wrong password after the same amount of hashing, and "forgot" always answers ok
 * after sending one message (the token, or a notice that the address has no account).
 * Per address, failed logins back off and reset mails are throttled (./auth-throttles.ts),
 * an unknown address exactly as a known one.
 */
import { AppError, validationError } from '../../core/errors.js';
import type { Account, Tenant } from '../../store/repos/tenancy.js';
import type { DomainContext } from '../platform/context.js';
import type { ForgotPasswordInput, LoginInput, LoginResult, ResetPasswordInput, TenantRef } from 'agentpay-sdk/contract';
import { issueKey, revokeAll } from './api-keys.js';
import { AuthThrottles, DEFAULT_ACCOUNT_LIMITS, type AccountLimits } from './auth-throttles.js';
import { hashEmailToken, newEmailToken } from './email-tokens.js';
import type { Mailer, NoticeMessage, TokenMessage } from '../platform/mailer.js';
import { assertAcceptablePassword, burnPasswordCheck, hashPassword, prepareBurnPasswordCheck, verifyPassword } from './passwords.js';

export const LOGIN_KEY_TTL_MS = 30 * 24 * 60 * 60 * 1000;

/** Token lifetime and whether responses echo tokens (sandbox `--dev-echo-tokens`). */
export interface EmailTokenOptions {
  tokenTtlMs: number;
  devEchoTokens: boolean;
}

const EMAIL = /^[^\s@"(),:;<>[\]\\]+@[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$/;

/** Trimmed and lowercased; 400 VALIDATION_FAILED naming `field` unless it looks like an address. */
export function normaliseEmail(email: string, field = 'email'): string {
  const e = email.trim().toLowerCase();
  if (e.length > 254 || !EMAIL.test(e)) throw validationError(field, `must be an email address like name@example.com, got ${JSON.stringify(email.slice(0, 100))}`);
  return e;
}

/** How signup and login name the tenant: a provider's settlement wallet comes along. */
export function tenantRef(t: Tenant): TenantRef {
  return { kind: t.kind, id: t.id, ...(t.kind === 'provider' && t.settlementWalletId ? { walletId: t.settlementWalletId } : {}) };
}

export type { LoginResult } from 'agentpay-sdk/contract';

const BAD_LOGIN = 'email or password is wrong; reset a forgotten password with POST /v1/accounts/password/forgot';

export class AccountService {
  private readonly throttles: AuthThrottles;

  constructor(private ctx: DomainContext, private mailer: Mailer, private opts: EmailTokenOptions & { accountLimits?: AccountLimits }) {
    this.throttles = new AuthThrottles(opts.accountLimits ?? DEFAULT_ACCOUNT_LIMITS);
    // so that even the first unknown-email login costs no more than a wrong password
    prepareBurnPasswordCheck();
  }

  /**
   * 429 RATE_LIMITED (retry-after) while the address is held back after failed logins, checked
   * before any password, for an address with an account or without one alike.
   */
  async login(input: LoginInput): Promise<LoginResult> {
    const email = normaliseEmail(input.email);
    const account = await this.ctx.store.tx(async (r) => {
      await this.throttles.beginLogin(r, email, this.ctx.clock.now());
      return r.accounts.byEmail(email);
    });
    const ok = account ? await verifyPassword(input.password, account.passwordHash) : await burnPasswordCheck(input.password);
    if (!account || !ok) throw new AppError('UNAUTHORIZED', BAD_LOGIN, { reason: 'login_failed' });
    return this.ctx.store.tx(async (r) => {
      // the account locked and read again: a password reset that got in first wins (its
      // revocation of login keys cannot miss this one), and the password checked is still the one
      const current = await r.accounts.get(account.id);
      const tenant = current && current.passwordHash === account.passwordHash ? await r.tenants.get(account.tenantId) : undefined;
      if (!tenant) throw new AppError('UNAUTHORIZED', BAD_LOGIN, { reason: 'login_failed' });
      await this.throttles.loginSucceeded(r, email);
      const now = this.ctx.clock.now();
      const expiresAt = now + LOGIN_KEY_TTL_MS;
      const { record, key } = await issueKey(r, this.ctx, tenant, { name: `login ${new Date(now).toISOString()}`, expiresAt, loginAccountId: account.id });
      return { tenant: tenantRef(tenant), apiKey: { id: record.id, key, scopes: record.scopes, expiresAt: new Date(expiresAt).toISOString() } };
    });
  }

  /**
   * Always `{ok: true}`, after one message either way: the token to an account's address
   * (and echoed by a sandbox gateway), else a notice that the address has no account, so
   * that a mailer's send time does not tell the two apart. Past the address's reset-mail
   * throttle nothing is made or sent, and the answer is the same `{ok: true}`.
   */
  async forgotPassword(input: ForgotPasswordInput): Promise<{ ok: true; token?: string }> {
    const email = normaliseEmail(input.email);
    const issued = await this.ctx.store.tx(async (r) => {
      const now = this.ctx.clock.now();
      if (!(await this.throttles.takeResetMail(r, email, now))) return 'throttled' as const;
      const account = await r.accounts.byEmail(email);
      if (!account) return undefined;
      const { token, tokenHash } = newEmailToken();
      const expiresAt = now + this.opts.tokenTtlMs;
      await r.passwordResets.insert({ id: this.ctx.ids.next('passwordReset'), accountId: account.id, tokenHash, expiresAt, usedAt: null, createdAt: now });
      return { account, token, expiresAt };
    });
    if (issued === 'throttled') return { ok: true };
    if (!issued) {
      await this.mailer.send(noAccountMessage(email));
      return { ok: true };
    }
    await this.mailer.send(resetMessage(issued.account, issued.token, issued.expiresAt));
    return this.opts.devEchoTokens ? { ok: true, token: issued.token } : { ok: true };
  }

  /**
   * Sets a new password with a reset token. The token works once; using it also
   * retires every other open reset token of the account, and revokes every key the
   * account's logins issued, with the keys those minted (whoever knew the old password
   * may hold them). Other keys (the signup key, keys made by it for agents) are left
   * alone: `POST /v1/auth/keys/:id/revoke` revokes any of them that leaked.
   */
  async resetPassword(input: ResetPasswordInput): Promise<{ ok: true }> {
    assertAcceptablePassword(input.password);
    const tokenHash = hashEmailToken(input.token);
    const usable = <T extends { usedAt: number | null; expiresAt: number }>(reset: T | undefined): T => {
      if (!reset || reset.usedAt !== null) throw validationError('token', 'is not a valid reset token, or was already used; request a new one with POST /v1/accounts/password/forgot', { reason: 'reset_token_unusable' });
      if (reset.expiresAt <= this.ctx.clock.now()) throw validationError('token', 'has expired; request a new one with POST /v1/accounts/password/forgot', { reason: 'reset_token_expired' });
      return reset;
    };
    // fail fast before the slow hash, then check again inside the transaction
    usable(await this.ctx.store.read((r) => r.passwordResets.byTokenHash(tokenHash)));
    const passwordHash = await hashPassword(input.password);
    await this.ctx.store.tx(async (r) => {
      const reset = usable(await r.passwordResets.byTokenHash(tokenHash));
      const now = this.ctx.clock.now();
      await r.passwordResets.markUsed(reset.id, now);
      await r.passwordResets.retireOpenForAccount(reset.accountId, now);
      await r.accounts.get(reset.accountId); // locks it (a store with row locks): a login issuing a key meanwhile queues behind
      await r.accounts.update(reset.accountId, { passwordHash, updatedAt: now });
      await revokeAll((at) => r.apiKeys.revokeLoginKeys(reset.accountId, at), now);
    });
    return { ok: true };
  }
}

function resetMessage(account: Account, token: string, expiresAt: number): TokenMessage {
  const expires = new Date(expiresAt).toISOString();
  return {
    kind: 'password_reset',
    to: account.email,
    subject: 'Reset your agentpay password',
    text: [
      'Someone asked to reset the password of this agentpay account.',
      '',
      `Reset token: ${token}`,
      '',
      `It works once, until ${expires}: POST /v1/accounts/password/reset {"token": "...", "password": "..."}.`,
      'If it was not you, ignore this message; your password is unchanged.',
    ].join('\n'),
    token,
    expiresAt: expires,
  };
}

function noAccountMessage(email: string): NoticeMessage {
  return {
    kind: 'password_reset_no_account',
    to: email,
    subject: 'agentpay password reset: no account uses this address',
    text: [
      `Someone asked to reset the password of an agentpay account with ${email}, but no account uses this address.`,
      '',
      'If it was you, you may have signed up with another address; a new account is made with agentpay signup (POST /v1/signup).',
      'If it was not you, ignore this message.',
    ].join('\n'),
  };
}
