/**
 * Signup: a pending record holding the hashed password and a mailed one-time token.
 * Verifying the token creates, in one transaction, the tenant (a provider with its
 * settlement wallet, pending verification by an operator), the account that logs in
 * to it, and a first API key with the kind's default scopes.
 *
 * The routes do not disclose which emails have accounts: a signup for an address that
 * already has one is answered, stored and timed like any other, but its owner is mailed
 * a notice (someone tried to sign up; log in or reset the password) instead of a token,
 * and the signup keeps NO_TOKEN, so verifying it fails like a wrong token and it never
 * makes a second account. Only `--dev-echo-tokens` shows the difference: no token is
 * echoed for such an address (a sandbox flag; see docs/api/tenancy.md).
 */
import { AppError, notFound, validationError } from '../../core/errors.js';
import type { Signup } from '../../store/repos/tenancy.js';
import type { DomainContext } from '../platform/context.js';
import type { SignupInput, SignupRecord, SignupResendInput, SignupStarted, SignupVerified, SignupVerifyInput } from 'agentpay-sdk/contract';
import { issueKey } from './api-keys.js';
import { normaliseEmail, tenantRef, type EmailTokenOptions } from './accounts.js';
import { NO_TOKEN, newEmailToken, tokenMatches } from './email-tokens.js';
import type { Mailer, NoticeMessage, TokenMessage } from '../platform/mailer.js';
import { assertAcceptablePassword, hashPassword } from './passwords.js';
import { createTenant } from './tenants.js';

export type { SignupInput, SignupStarted, SignupVerified } from 'agentpay-sdk/contract';

export function signupView(s: Signup): SignupRecord {
  return {
    id: s.id,
    kind: s.kind,
    name: s.name,
    status: s.status,
    email: s.email,
    createdAt: new Date(s.createdAt).toISOString(),
    /** when the latest token stops working */
    tokenExpiresAt: new Date(s.tokenExpiresAt).toISOString(),
    verifiedAt: s.verifiedAt === null ? null : new Date(s.verifiedAt).toISOString(),
    tenantId: s.tenantId,
  };
}

export type SignupView = SignupRecord;

function normaliseWebsite(website: string | undefined): string | null {
  if (website === undefined) return null;
  const w = website.trim();
  let url: URL | undefined;
  try {
    url = new URL(w);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) throw validationError('website', 'must be an http(s) URL like https://example.com');
  return w;
}

export class SignupService {
  constructor(private ctx: DomainContext, private mailer: Mailer, private opts: EmailTokenOptions) {}

  async start(input: SignupInput): Promise<SignupStarted> {
    const name = input.name.trim();
    if (!name) throw validationError('name', 'must not be empty');
    const email = normaliseEmail(input.email);
    const website = normaliseWebsite(input.website);
    assertAcceptablePassword(input.password);
    // slow: outside the transaction, and done for a taken address too, so both take as long
    const passwordHash = await hashPassword(input.password);
    const { token, tokenHash } = newEmailToken();
    const { signup, taken } = await this.ctx.store.tx(async (r) => {
      const taken = (await r.accounts.byEmail(email)) !== undefined;
      const now = this.ctx.clock.now();
      const s: Signup = {
        id: this.ctx.ids.next('signup'),
        kind: input.kind,
        name,
        email,
        website,
        passwordHash,
        status: 'pending',
        tokenHash: taken ? NO_TOKEN : tokenHash,
        tokenExpiresAt: now + this.opts.tokenTtlMs,
        resendCount: 0,
        tenantId: null,
        createdAt: now,
        verifiedAt: null,
      };
      await r.signups.insert(s);
      return { signup: s, taken };
    });
    return this.deliver(signup, taken ? undefined : token);
  }

  async verify(input: SignupVerifyInput): Promise<SignupVerified> {
    return this.ctx.store.tx(async (r) => {
      const s = await r.signups.get(input.signupId);
      if (!s) throw notFound('NOT_FOUND', 'signup', input.signupId);
      if (s.status === 'verified') throw alreadyVerified(s);
      // a signup for a taken address holds NO_TOKEN: every token gets this same answer
      if (!tokenMatches(input.token, s.tokenHash)) {
        throw validationError('token', 'does not match this signup; use the token of the latest message (a resend replaces earlier tokens)');
      }
      const now = this.ctx.clock.now();
      if (s.tokenExpiresAt <= now) throw validationError('token', 'has expired; get a new one with POST /v1/signup/resend');
      // another signup with this email may have been verified since this one started; only the
      // holder of this signup's token, mailed to the address, learns it
      if (await r.accounts.byEmail(s.email)) {
        throw new AppError('CONFLICT', `email: ${s.email} already has an account; log in with POST /v1/accounts/login, or reset the password with POST /v1/accounts/password/forgot`, { field: 'email', reason: 'email_taken' });
      }

      const tenant = await createTenant(r, this.ctx, { kind: s.kind, name: s.name, email: s.email, website: s.website });
      await r.accounts.insert({ id: this.ctx.ids.next('account'), tenantId: tenant.id, email: s.email, passwordHash: s.passwordHash, createdAt: now, updatedAt: now });
      const { record, key } = await issueKey(r, this.ctx, tenant, { name: 'signup' });
      await r.signups.update(s.id, { status: 'verified', tenantId: tenant.id, verifiedAt: now });
      return { tenant: tenantRef(tenant), apiKey: { id: record.id, key, scopes: record.scopes } };
    });
  }

  /**
   * A new token replaces the previous one, which stops working at once. For an address that
   * has an account (since the start, or by now) the notice is mailed again instead, alike.
   */
  async resend(input: SignupResendInput): Promise<SignupStarted> {
    const { token, tokenHash } = newEmailToken();
    const { signup, taken } = await this.ctx.store.tx(async (r) => {
      const s = await r.signups.get(input.signupId);
      if (!s) throw notFound('NOT_FOUND', 'signup', input.signupId);
      if (s.status === 'verified') throw alreadyVerified(s);
      const taken = s.tokenHash === NO_TOKEN || (await r.accounts.byEmail(s.email)) !== undefined;
      const patch = { tokenHash: taken ? NO_TOKEN : tokenHash, tokenExpiresAt: this.ctx.clock.now() + this.opts.tokenTtlMs, resendCount: s.resendCount + 1 };
      await r.signups.update(s.id, patch);
      return { signup: { ...s, ...patch }, taken };
    });
    return this.deliver(signup, taken ? undefined : token);
  }

  async get(id: string): Promise<{ signup: SignupView }> {
    const s = await this.ctx.store.read((r) => r.signups.get(id));
    if (!s) throw notFound('NOT_FOUND', 'signup', id);
    return { signup: signupView(s) };
  }

  /**
   * Mails the token (no token: the notice for a taken address) after the transaction
   * committed; a failed send is mended by a resend. The answer is the same either way,
   * but for the token a sandbox gateway echoes.
   */
  private async deliver(s: Signup, token: string | undefined): Promise<SignupStarted> {
    await this.mailer.send(token === undefined ? existingAccountNotice(s) : verificationMessage(s, token));
    return this.opts.devEchoTokens && token !== undefined ? { signup: signupView(s), token } : { signup: signupView(s) };
  }
}

function alreadyVerified(s: Signup): AppError {
  return new AppError('CONFLICT', `signup ${s.id} is already verified; log in with POST /v1/accounts/login`, { signupId: s.id, tenantId: s.tenantId });
}

function verificationMessage(s: Signup, token: string): TokenMessage {
  const expires = new Date(s.tokenExpiresAt).toISOString();
  return {
    kind: 'signup_verification',
    to: s.email,
    subject: 'Verify your agentpay signup',
    text: [
      `Welcome to agentpay, ${s.name}.`,
      '',
      `Signup ${s.id} (${s.kind}) waits for this verification token:`,
      '',
      `  ${token}`,
      '',
      `It works until ${expires}: POST /v1/signup/verify {"signupId": "${s.id}", "token": "..."}.`,
      'If you did not sign up, ignore this message.',
    ].join('\n'),
    token,
    expiresAt: expires,
    signupId: s.id,
  };
}

/**
 * To the owner of an address that already has an account. It repeats nothing the requester
 * typed but the kind (a name could carry a phishing line) and asks nothing of the reader.
 */
function existingAccountNotice(s: Signup): NoticeMessage {
  return {
    kind: 'signup_existing_account',
    to: s.email,
    subject: 'Someone tried to sign up to agentpay with your address',
    text: [
      `Someone, perhaps you, tried to sign up a new agentpay ${s.kind} (signup ${s.id}) with ${s.email}.`,
      'This address already has an agentpay account, so no new account was made.',
      '',
      `To use your account, log in: agentpay login --email ${s.email} (POST /v1/accounts/login).`,
      `Forgot the password? agentpay password forgot --email ${s.email} (POST /v1/accounts/password/forgot) mails a reset token.`,
      '',
      'If it was not you, ignore this message: your account is unchanged.',
    ].join('\n'),
    signupId: s.id,
  };
}
