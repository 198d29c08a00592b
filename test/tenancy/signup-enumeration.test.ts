/**
 * The public signup and account routes do not tell anyone which emails have accounts:
 * a signup for a taken address is answered like any other, its owner is mailed a notice
 * instead of a token, and it can never be verified; password/forgot mails one message
 * either way. Against a real gateway (a ManualClock keeps the times in answers equal).
 */
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signupText } from '../../src/cli/account.js';
import { forgotText } from '../../src/cli/password.js';
import { outboxPath, type MailMessage, type OutboxLine } from '../../src/domain/platform/mailer.js';
import type { SignupRecord } from '../../packages/sdk/src/types.js';
import { ManualClock, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { snapshotDb } from '../helpers/matrix.js';
import { cli, json, removeTempDirs, tempDir } from '../cli/helpers.js';
import { PASSWORD, refusal, signUp, uniqueEmail } from './helpers.js';

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway({ clock: new ManualClock() });
});
afterAll(async () => {
  await t?.close();
  removeTempDirs();
});

/** Every line of the outbox, notices included. */
function mails(dataDir: string): OutboxLine<MailMessage>[] {
  const p = outboxPath(dataDir);
  if (!existsSync(p)) return [];
  return readFileSync(p, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as OutboxLine<MailMessage>);
}
const mailsAbout = (dataDir: string, signupId: string) => mails(dataDir).filter((m) => m.kind !== 'alert' && m.signupId === signupId);

/** A signup answer with what differs between any two signups (id, email) taken out. */
function shape(body: { signup: SignupRecord; token?: string }) {
  const { id, email, ...rest } = body.signup;
  return { ...body, signup: { ...rest, id: id.replace(/^(sgn_).*/, '$1…'), email: email.replace(/^.*@/, '…@') } };
}

/** An existing account, and the signup answers for its address and for a new one. */
async function takenAndFresh(gw: TestGateway) {
  const owner = await signUp(gw);
  const body = (email: string) => ({ kind: 'provider', name: 'Click https://evil.example/login', email, password: 'the attempted password' });
  const taken = await gw.client().http.raw<{ signup: SignupRecord; token?: string }>('POST', '/v1/signup', { body: body(owner.email.toUpperCase()) });
  const fresh = await gw.client().http.raw<{ signup: SignupRecord; token?: string }>('POST', '/v1/signup', { body: body(uniqueEmail('fresh')) });
  return { owner, taken, fresh };
}

describe('POST /v1/signup with an email that already has an account', () => {
  it('answers with the same status and body as for a new email: a pending signup with an id, no token', async () => {
    const { taken, fresh } = await takenAndFresh(t);
    expect(taken.status).toBe(200);
    expect(fresh.status).toBe(200);
    expect(taken.body.signup).toMatchObject({ id: expect.stringMatching(/^sgn_/), status: 'pending', verifiedAt: null, tenantId: null });
    expect(taken.body.token).toBeUndefined();
    expect(shape(taken.body)).toEqual(shape(fresh.body));
    const headerNames = (h: Headers) => {
      const names: string[] = [];
      h.forEach((_v, k) => names.push(k));
      return names.sort();
    };
    expect(headerNames(taken.headers)).toEqual(headerNames(fresh.headers));
  });

  it("mails the owner a notice pointing to login and password reset, with no token and none of the requester's text", async () => {
    const { owner, taken } = await takenAndFresh(t);
    const about = mailsAbout(t.dataDir, taken.body.signup.id);
    expect(about).toHaveLength(1);
    const notice = about[0]!;
    expect(notice).toMatchObject({ kind: 'signup_existing_account', to: owner.email, signupId: taken.body.signup.id });
    expect(notice).not.toHaveProperty('token');
    expect(notice.text).toContain(`agentpay login --email ${owner.email}`);
    expect(notice.text).toContain('POST /v1/accounts/password/forgot');
    expect(notice.text).toContain('no new account was made');
    expect(notice.text).not.toContain('evil.example');
  });

  it('cannot be verified: every token gets the answer of a wrong token, and no account, tenant or key is made', async () => {
    const { owner, taken, fresh } = await takenAndFresh(t);
    const before = snapshotDb(t.dataDir);
    const token = 'A'.repeat(43);
    const onTaken = await refusal(t.client().signup.verify({ signupId: taken.body.signup.id, token }));
    const onFresh = await refusal(t.client().signup.verify({ signupId: fresh.body.signup.id, token }));
    expect(onTaken).toMatchObject({ code: 'VALIDATION_FAILED', status: 400, details: { field: 'token' } });
    const answer = (e: typeof onTaken) => ({ code: e.code, status: e.status, message: e.message, details: e.details });
    expect(answer(onTaken)).toEqual(answer(onFresh));
    // not even the stored placeholder, in any spelling, matches
    for (const guess of ['none', 'NONE', '']) {
      const e = await refusal(t.client().http.request('POST', '/v1/signup/verify', { body: { signupId: taken.body.signup.id, token: guess } }));
      expect(e.code).toBe('VALIDATION_FAILED');
    }
    const after = snapshotDb(t.dataDir);
    for (const table of ['tenants', 'accounts', 'api_keys']) expect(after[table]).toEqual(before[table]);
    // the owner's password still works, the attempted one does not
    expect((await t.client().accounts.login({ email: owner.email, password: owner.password })).tenant.id).toBe(owner.tenant.id);
    expect(await refusal(t.client().accounts.login({ email: owner.email, password: 'the attempted password' }))).toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('GET /v1/signup/:id shows it pending, like any other signup', async () => {
    const { taken, fresh } = await takenAndFresh(t);
    const a = await t.client().signup.get(taken.body.signup.id);
    const b = await t.client().signup.get(fresh.body.signup.id);
    expect(a.signup.status).toBe('pending');
    expect(shape(a)).toEqual(shape(b));
  });

  it('resend mails the notice again and answers like any resend; the signup stays unverifiable', async () => {
    const { owner, taken, fresh } = await takenAndFresh(t);
    const a = await t.client().signup.resend(taken.body.signup.id);
    const b = await t.client().signup.resend(fresh.body.signup.id);
    expect(shape(a)).toEqual(shape(b));
    const about = mailsAbout(t.dataDir, taken.body.signup.id);
    expect(about.map((m) => m.kind)).toEqual(['signup_existing_account', 'signup_existing_account']);
    expect(about.every((m) => m.to === owner.email && !('token' in m))).toBe(true);
    expect(await refusal(t.client().signup.verify({ signupId: taken.body.signup.id, token: 'A'.repeat(43) }))).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'token' } });
  });

  it('a pending signup whose address got an account meanwhile: resend mails the notice and its old token stops working', async () => {
    const email = uniqueEmail('race');
    const first = await t.client().signup.start({ kind: 'workspace', name: 'First', email, password: PASSWORD });
    const second = await t.client().signup.start({ kind: 'workspace', name: 'Second', email, password: PASSWORD });
    const tokenOf = (id: string) => {
      const m = mailsAbout(t.dataDir, id).at(-1)!;
      return m.kind === 'signup_verification' ? m.token : '';
    };
    const oldToken = tokenOf(second.signup.id);
    await t.client().signup.verify({ signupId: first.signup.id, token: tokenOf(first.signup.id) });

    await t.client().signup.resend(second.signup.id);
    expect(mailsAbout(t.dataDir, second.signup.id).at(-1)).toMatchObject({ kind: 'signup_existing_account', to: email });
    const e = await refusal(t.client().signup.verify({ signupId: second.signup.id, token: oldToken }));
    expect(e).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'token' } });
  });

  it('changes nothing about a new email: its token is mailed and verifies', async () => {
    const { fresh } = await takenAndFresh(t);
    const mail = mailsAbout(t.dataDir, fresh.body.signup.id).at(-1)!;
    expect(mail.kind).toBe('signup_verification');
    const verified = await t.client().signup.verify({ signupId: fresh.body.signup.id, token: mail.kind === 'signup_verification' ? mail.token : '' });
    expect(verified.tenant.kind).toBe('provider');
  });
});

describe('resend of a signup for a taken address', () => {
  let r: TestGateway;
  beforeAll(async () => {
    r = await startTestGateway({ config: { rateLimit: { max: 100_000, windowMs: 1000, signupMax: 3, signupWindowMs: 60_000 } } });
  });
  afterAll(async () => {
    await r?.close();
  });

  it('is on the strict rate limit like any resend: 429 past signupMax', async () => {
    const owner = await signUp(r); // one POST /v1/signup and one /verify
    const { signup } = await r.client().signup.start({ kind: 'workspace', name: 'Again', email: owner.email, password: PASSWORD });
    for (let i = 0; i < 3; i++) await r.client().signup.resend(signup.id);
    expect(await refusal(r.client().signup.resend(signup.id))).toMatchObject({ code: 'RATE_LIMITED', status: 429 });
    expect(mailsAbout(r.dataDir, signup.id)).toHaveLength(4); // the start and three resends
  });
});

describe('a gateway with --dev-echo-tokens', () => {
  let d: TestGateway;
  beforeAll(async () => {
    d = await startTestGateway({ config: { devEchoTokens: true } });
  });
  afterAll(async () => {
    await d?.close();
  });

  it('echoes no token for a taken address (a sandbox flag: it shows the difference) and still mails the notice', async () => {
    const { owner, taken, fresh } = await takenAndFresh(d);
    expect(fresh.body.token).toEqual(expect.any(String));
    expect(taken.status).toBe(200);
    expect(taken.body.token).toBeUndefined();
    expect(mailsAbout(d.dataDir, taken.body.signup.id)).toMatchObject([{ kind: 'signup_existing_account', to: owner.email }]);
    expect((await d.client().signup.resend(taken.body.signup.id)).token).toBeUndefined();
  });

  it('agentpay signup with a taken email exits 0 with the signup pending, and its text says to check the email', async () => {
    const owner = await signUp(d);
    const configDir = tempDir();
    const r = await cli(['signup', '--gateway-url', d.baseUrl, '--ca', join(d.dataDir, 'tls', 'ca.pem'), '--kind', 'workspace', '--name', 'Again',
      '--email', owner.email, '--password', 'another password', '--json'], { configDir });
    expect(r.exitCode, r.stderr).toBe(0);
    const out = json(r);
    expect(out.signup).toMatchObject({ status: 'pending', email: owner.email });
    expect(out.verified).toBeUndefined();
    expect(out.next).toBe(`agentpay signup --signup-id ${out.signup.id} --token TOKEN`);
    expect(r.stderr).toContain(out.next);
    expect(existsSync(join(configDir, 'config.json'))).toBe(false); // no profile saved

    // what a terminal shows (stdout here is piped, so the command printed JSON)
    const text = signupText(out);
    expect(text).toContain(`check the email sent to ${owner.email}`);
    expect(text).toContain('if the address already has an account, says so: then log in (agentpay login --email EMAIL)');
    expect(text).not.toContain('token was sent');
  });
});

describe('POST /v1/accounts/password/forgot', () => {
  it('answers {ok: true} and sends one message either way: a token to an account, a notice without one to any other address', async () => {
    const { email } = await signUp(t);
    const ghost = uniqueEmail('ghost');
    expect(await t.client().accounts.forgotPassword({ email })).toEqual({ ok: true });
    expect(await t.client().accounts.forgotPassword({ email: ghost })).toEqual({ ok: true });
    const toAccount = mails(t.dataDir).filter((m) => m.to === email && m.kind.startsWith('password_reset'));
    const toGhost = mails(t.dataDir).filter((m) => m.to === ghost);
    expect(toAccount.map((m) => m.kind)).toEqual(['password_reset']);
    expect(toGhost).toHaveLength(1);
    expect(toGhost[0]).toMatchObject({ kind: 'password_reset_no_account' });
    expect(toGhost[0]).not.toHaveProperty('token');
    expect(toGhost[0]!.text).toContain('no account uses this address');
    // and agentpay password forgot says the same for both
    expect(forgotText({ email: ghost, next: 'x' })).toBe(`A message was sent to ${ghost}: a one-time reset token if the address has an account, else a note that it has none.`);
  });
});

describe('POST /v1/accounts/login', () => {
  it('answers an unknown email, a wrong password and a pending signup the same 401, whatever its body says', async () => {
    const { email } = await signUp(t);
    const pending = uniqueEmail('pending');
    await t.client().signup.start({ kind: 'workspace', name: 'Pending', email: pending, password: PASSWORD });
    const answers = await Promise.all(
      [email, uniqueEmail('nobody'), pending].map((e) => t.client().http.raw<{ error: { code: string; message: string; details: Record<string, unknown> } }>('POST', '/v1/accounts/login', { body: { email: e, password: 'not the password' } })),
    );
    for (const a of answers) expect(a.status).toBe(401);
    const bodies = answers.map((a) => a.body.error);
    expect(bodies[1]).toEqual(bodies[0]);
    expect(bodies[2]).toEqual(bodies[0]);
  });
});
