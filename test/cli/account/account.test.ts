/**
 * Signup, login, whoami and profiles, against a real in-process gateway that echoes
 * signup tokens (devEchoTokens), as `agentpay dev --dev-echo-tokens` does.
 */
import { statSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localOutbox } from '../../../src/cli/account.js';
import { outboxPath } from '../../../src/domain/platform/mailer.js';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { cli, json, removeTempDirs, tempDir } from '../helpers.js';

let t: TestGateway;
let ca: string;
let gw: string[];

beforeAll(async () => {
  t = await startTestGateway({ config: { devEchoTokens: true } });
  ca = join(t.dataDir, 'tls', 'ca.pem');
  gw = ['--gateway-url', t.baseUrl, '--ca', ca];
});
afterAll(async () => {
  await t.close();
  removeTempDirs();
});

const profiles = (configDir: string) => JSON.parse(readFileSync(join(configDir, 'config.json'), 'utf8'));

describe('agentpay login --api-key', () => {
  it('checks the key, saves it as a 0600 profile, and later commands use it without flags', async () => {
    const configDir = tempDir();
    const r = await cli(['login', ...gw, '--api-key', t.creds.workspace.apiKey, '--profile', 'dev', '--json'], { configDir });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(json(r).whoami.tenant.id).toBe(t.creds.workspace.id);
    expect(statSync(join(configDir, 'config.json')).mode & 0o777).toBe(0o600);
    expect(profiles(configDir)).toEqual({ current: 'dev', profiles: { dev: { baseUrl: t.baseUrl, apiKey: t.creds.workspace.apiKey, ca } } });

    const me = await cli(['whoami', '--json'], { configDir });
    expect(me.exitCode, me.stderr).toBe(0);
    expect(json(me)).toMatchObject({ tenant: { id: t.creds.workspace.id, kind: 'workspace' }, baseUrl: t.baseUrl, profile: 'dev' });

    const shown = json(await cli(['config', '--json'], { configDir }));
    expect(shown.current).toBe('dev');
    expect(shown.profiles[0]).toMatchObject({ name: 'dev', baseUrl: t.baseUrl, current: true });
    expect(shown.profiles[0].apiKey).not.toBe(t.creds.workspace.apiKey); // masked
    expect(t.creds.workspace.apiKey.startsWith(shown.profiles[0].apiKey.slice(0, 10))).toBe(true);
  });

  it('refuses a wrong key with exit 4 and saves nothing', async () => {
    const configDir = tempDir();
    const r = await cli(['login', ...gw, '--api-key', 'ap_w_notarealkeynotarealkeynotareal'], { configDir });
    expect(r.exitCode).toBe(4);
    expect(r.stderr).toContain('error UNAUTHORIZED');
    const cfg = await cli(['config', '--json'], { configDir });
    expect(json(cfg).profiles).toEqual([]);
  });

  it('lets flags beat the environment, and the environment beat the profile', async () => {
    const configDir = tempDir();
    await cli(['login', ...gw, '--api-key', t.creds.workspace.apiKey], { configDir });
    const env = { AGENTPAY_API_KEY: t.creds.provider.apiKey };
    expect(json(await cli(['whoami', '--json'], { configDir, env })).tenant.id).toBe(t.creds.provider.id);
    expect(json(await cli(['whoami', '--json', '--api-key', t.creds.operatorKey], { configDir, env })).tenant.kind).toBe('operator');
    expect(json(await cli(['whoami', '--json'], { configDir })).tenant.id).toBe(t.creds.workspace.id);
  });

  it('refuses an unknown --profile with a next step', async () => {
    const configDir = tempDir();
    const r = await cli(['whoami', '--profile', 'nope'], { configDir });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('error PROFILE_NOT_FOUND: no profile named "nope"');
    expect(r.stderr).toContain('Try:');
  });

  it('fails TLS with exit 3 and a next step when the CA is not trusted', async () => {
    const r = await cli(['whoami', '--gateway-url', t.baseUrl, '--api-key', t.creds.workspace.apiKey], { configDir: tempDir() });
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toMatch(/^error TLS_FAILED: /);
    expect(r.stderr).toContain('Try: trust the gateway');
  });
});

describe('agentpay signup', () => {
  it('starts and verifies with the echoed token, saves the new key as the current profile', async () => {
    const configDir = tempDir();
    const r = await cli(
      ['signup', ...gw, '--kind', 'workspace', '--name', 'Acme Research', '--email', 'ops@acme.test', '--password', 'correct horse battery', '--json'],
      { configDir },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const out = json(r);
    expect(out.signup).toMatchObject({ kind: 'workspace', email: 'ops@acme.test' });
    expect(out.verified.tenant).toMatchObject({ kind: 'workspace', id: expect.stringMatching(/^wsp_/) });
    expect(out.verified.apiKey.key).toMatch(/^ap_w_/);
    expect(out.profile.name).toBe('default');

    const me = json(await cli(['whoami', '--json'], { configDir }));
    expect(me.tenant).toMatchObject({ id: out.verified.tenant.id, name: 'Acme Research' });

    // the account logs in by email for a fresh key, saved under another profile
    const login = await cli(['login', ...gw, '--email', 'ops@acme.test', '--password', 'correct horse battery', '--profile', 'acme', '--json'], { configDir });
    expect(login.exitCode, login.stderr).toBe(0);
    expect(json(login)).toMatchObject({ whoami: { tenant: { id: out.verified.tenant.id } }, profile: { name: 'acme' }, expiresAt: expect.any(String) });
    expect(profiles(configDir).current).toBe('acme');
  });

  it('login --email --profile NEW uses the gateway of the current profile and saves the new profile with it', async () => {
    const configDir = tempDir();
    const first = await cli(['login', ...gw, '--api-key', t.creds.workspace.apiKey, '--json'], { configDir });
    expect(first.exitCode, first.stderr).toBe(0);
    await t.client().signup.start({ kind: 'workspace', name: 'Second Co', email: 'second@acme.test', password: 'second secret phrase' })
      .then((s) => t.client().signup.verify({ signupId: s.signup.id, token: s.token! }));

    // no --gateway-url or --ca: the gateway is the current profile's
    const r = await cli(['login', '--email', 'second@acme.test', '--password', 'second secret phrase', '--profile', 'second', '--json'], { configDir });
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    expect(json(r)).toMatchObject({ baseUrl: t.baseUrl, profile: { name: 'second' } });
    const saved = profiles(configDir);
    expect(saved.current).toBe('second');
    expect(saved.profiles.second).toMatchObject({ baseUrl: t.baseUrl, ca });
    expect(saved.profiles.second.apiKey).not.toBe(t.creds.workspace.apiKey); // a new key, not the current profile's
    expect(saved.profiles.default.apiKey).toBe(t.creds.workspace.apiKey);

    // signup --profile NEW the same
    const s = await cli(['signup', '--kind', 'workspace', '--name', 'Third Co', '--email', 'third@acme.test', '--password', 'third secret phrase', '--profile', 'third', '--json'], { configDir });
    expect(s.exitCode, s.stdout + s.stderr).toBe(0);
    expect(profiles(configDir).profiles.third).toMatchObject({ baseUrl: t.baseUrl, ca, apiKey: json(s).verified.apiKey.key });
  });

  it('a wrong password says what to do in CLI terms, without an API route (exit 4)', async () => {
    const r = await cli(['login', ...gw, '--email', 'ops@acme.test', '--password', 'not the password'], { configDir: tempDir() });
    expect(r.exitCode).toBe(4);
    expect(r.stderr).toContain('error UNAUTHORIZED: email or password is wrong');
    expect(r.stderr).not.toContain('/v1/');
    expect(r.stderr).toContain('agentpay password forgot --email EMAIL');
  });

  it('password forgot and password reset set a new password; the old one and the used token stop working', async () => {
    const email = 'forgetful@acme.test';
    const started = await t.client().signup.start({ kind: 'workspace', name: 'Forgetful Co', email, password: 'old secret phrase' });
    await t.client().signup.verify({ signupId: started.signup.id, token: started.token! });

    const forgot = await cli(['password', 'forgot', ...gw, '--email', email, '--json'], { configDir: tempDir() });
    expect(forgot.exitCode, forgot.stderr).toBe(0);
    const { token, next } = json(forgot) as { token: string; next: string };
    expect(token).toEqual(expect.any(String)); // this test gateway echoes tokens
    expect(next).toBe(`agentpay password reset --token ${token}`);

    const reset = await cli(['password', 'reset', ...gw, '--token', token, '--password-stdin', '--json'], { configDir: tempDir(), input: 'new secret phrase\n' });
    expect(reset.exitCode, reset.stderr).toBe(0);
    expect(json(reset)).toMatchObject({ ok: true });

    expect((await cli(['login', ...gw, '--email', email, '--password', 'old secret phrase'], { configDir: tempDir() })).exitCode).toBe(4);
    expect((await cli(['login', ...gw, '--email', email, '--password', 'new secret phrase', '--json'], { configDir: tempDir() })).exitCode).toBe(0);

    const again = await cli(['password', 'reset', ...gw, '--token', token, '--password', 'another phrase here'], { configDir: tempDir() });
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toContain('error VALIDATION_FAILED: --token: is not a valid reset token, or was already used; request a new one with agentpay password forgot');
    // the next step fits a used token, not a wrong login
    expect(again.stderr).toMatch(/Try: request a new token: agentpay password forgot --email EMAIL/);
    expect(again.stderr).not.toContain('check the email and password');
  });

  it('reads the password from stdin with --password-stdin (out of argv), and refuses an empty stdin', async () => {
    const configDir = tempDir();
    const r = await cli(['signup', ...gw, '--kind', 'workspace', '--name', 'Piped Ltd', '--email', 'piped@acme.test', '--password-stdin', '--json'], { configDir, input: 'piped secret phrase\n' });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(json(r).verified.tenant).toMatchObject({ kind: 'workspace', id: expect.stringMatching(/^wsp_/) });
    const login = await cli(['login', ...gw, '--email', 'piped@acme.test', '--password-stdin', '--profile', 'piped', '--json'], { configDir, input: 'piped secret phrase' });
    expect(login.exitCode, login.stderr).toBe(0); // the trailing newline was not part of the password

    const empty = await cli(['signup', ...gw, '--kind', 'workspace', '--name', 'Empty', '--email', 'empty@acme.test', '--password-stdin', '--json'], { configDir: tempDir(), input: '' });
    expect(empty.exitCode).toBe(2);
    expect(json(empty).error).toMatchObject({ code: 'USAGE', message: expect.stringMatching(/^--password-stdin: stdin was empty/) });
  });

  it('verifies an existing signup with --signup-id and --token; a provider gets its settlement wallet', async () => {
    const configDir = tempDir();
    const started = await t.client().signup.start({ kind: 'provider', name: 'Weather Co', email: 'api@weather.test', password: 'sunny days ahead', website: 'https://weather.test' });
    const r = await cli(['signup', ...gw, '--signup-id', started.signup.id, '--token', started.token!, '--json'], { configDir });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(json(r).verified.tenant).toMatchObject({ kind: 'provider', id: expect.stringMatching(/^prv_/), walletId: expect.stringMatching(/^wal_/) });
  });

  it('without a terminal, a missing value is an error naming the flag (no prompt, no hang)', async () => {
    const r = await cli(['signup', ...gw, '--kind', 'workspace', '--name', 'No Email'], { configDir: tempDir() });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/^error USAGE: --email is required \(there is no terminal to ask on\)/);
  });

  it('a wrong token is refused by the gateway (exit 1)', async () => {
    const started = await t.client().signup.start({ kind: 'workspace', name: 'Typo Ltd', email: 'typo@x.test', password: 'long enough password' });
    const r = await cli(['signup', ...gw, '--signup-id', started.signup.id, '--token', 'wrong-token'], { configDir: tempDir() });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/^error [A-Z_]+: /);
  });
});

describe('localOutbox', () => {
  it("names the outbox of a local gateway reached through --data-dir, ./.agentpay or a profile saved from it, and of no other", () => {
    expect(localOutbox({ dataDir: '/d', sources: { baseUrl: 'data-dir' } })).toBe(outboxPath('/d'));
    expect(localOutbox({ dataDir: '/d', sources: { baseUrl: 'local' } })).toBe(outboxPath('/d'));
    expect(localOutbox({ profileDataDir: '/p', sources: { baseUrl: 'profile' } })).toBe(outboxPath('/p'));
    expect(localOutbox({ profileDataDir: '/p', sources: { baseUrl: 'env' } })).toBeUndefined();
    expect(localOutbox({ sources: { baseUrl: 'profile' } })).toBeUndefined();
  });
});
