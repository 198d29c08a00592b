/**
 * Signup and login make the saved profile current, and a profile ranks above ./.agentpay
 * (docs/cli.md, "Which gateway and key a command uses"). That switch is said on stderr, one line:
 * which profile is current now, where it is saved and how to go back; stdout stays the result.
 * A profile being saved under a new name takes its gateway from ./.agentpay before the current
 * profile's, as documented. Runs the built binary against a real gateway that echoes signup tokens.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConnection } from '../../../src/cli/client.js';
import { saveProfile } from '../../../src/cli/profile.js';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { cli, json, removeTempDirs, tempDir } from '../helpers.js';

let t: TestGateway;
let gw: string[];

beforeAll(async () => {
  t = await startTestGateway({ config: { devEchoTokens: true } });
  gw = ['--gateway-url', t.baseUrl, '--ca', join(t.dataDir, 'tls', 'ca.pem')];
});
afterAll(async () => {
  await t.close();
  removeTempDirs();
});

/** A project directory whose ./.agentpay is the test gateway, as `agentpay dev` leaves it while running. */
function projectWithDevGateway(): string {
  const cwd = tempDir();
  const dir = join(cwd, '.agentpay');
  mkdirSync(join(dir, 'tls'), { recursive: true });
  copyFileSync(join(t.dataDir, 'dev-credentials.json'), join(dir, 'dev-credentials.json'));
  copyFileSync(join(t.dataDir, 'tls', 'ca.pem'), join(dir, 'tls', 'ca.pem'));
  // this test process stands in for the gateway's (it is alive, as a running gateway's is)
  writeFileSync(join(dir, 'gateway.json'), JSON.stringify({ baseUrl: t.baseUrl, httpUrl: null, pid: process.pid }));
  return cwd;
}

/** An account (email, password) on the test gateway. */
async function account(name: string): Promise<{ email: string; password: string }> {
  const email = `${name}@polish.test`;
  const password = `${name} secret phrase`;
  const s = await t.client().signup.start({ kind: 'workspace', name, email, password });
  await t.client().signup.verify({ signupId: s.signup.id, token: s.token! });
  return { email, password };
}

const stderrLines = (s: string) => s.split('\n').filter(Boolean);
const saved = (configDir: string) => JSON.parse(readFileSync(join(configDir, 'config.json'), 'utf8'));

describe('agentpay signup in a directory whose commands use ./.agentpay', () => {
  it('says on stderr that the new profile is now current instead of ./.agentpay, where it is saved and how to go back', async () => {
    const configDir = tempDir();
    const cwd = projectWithDevGateway();
    const before = await cli(['whoami', '--json'], { configDir, cwd });
    expect(json(before).tenant.id).toBe(t.creds.workspace.id); // ./.agentpay's dev workspace key

    const r = await cli(['signup', '--kind', 'workspace', '--name', 'Switch Co', '--email', 'switch@polish.test', '--password', 'switch secret phrase', '--json'], { configDir, cwd });
    expect(r.exitCode, r.stderr).toBe(0);
    // stdout is the result, as before: nothing else
    expect(Object.keys(json(r)).sort()).toEqual(['profile', 'signup', 'verified']);
    const path = join(configDir, 'config.json');
    expect(json(r).profile).toEqual({ name: 'default', path });
    expect(stderrLines(r.stderr)).toEqual([
      `The current profile is now "default", saved in ${path}: commands in this directory now use it instead of ./.agentpay's dev keys; to go back: agentpay config remove default (the key stays valid), or add --data-dir .agentpay to a command`,
    ]);

    // as documented, the profile now ranks above ./.agentpay; both ways back work
    const newTenant = json(r).verified.tenant.id;
    expect(json(await cli(['whoami', '--json'], { configDir, cwd })).tenant.id).toBe(newTenant);
    expect(json(await cli(['whoami', '--json', '--data-dir', '.agentpay'], { configDir, cwd })).tenant.id).toBe(t.creds.workspace.id);
    expect((await cli(['config', 'remove', 'default'], { configDir, cwd })).exitCode).toBe(0);
    expect(json(await cli(['whoami', '--json'], { configDir, cwd })).tenant.id).toBe(t.creds.workspace.id);
  });

  it('prints the same line on stderr without --json too, and nothing of it on stdout', async () => {
    const configDir = tempDir();
    const cwd = projectWithDevGateway();
    const r = await cli(['login', '--email', (await account('human')).email, '--password', 'human secret phrase', '--profile', 'me'], { configDir, cwd });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).not.toContain('./.agentpay');
    expect(stderrLines(r.stderr)).toEqual([expect.stringMatching(/^The current profile is now "me", saved in .*config\.json: commands in this directory now use it instead of \.\/\.agentpay's dev keys; to go back: /)]);
  });
});

describe('agentpay login switching between profiles', () => {
  it('names the profile it replaced as current and how to go back to it; says nothing when nothing changed', async () => {
    const configDir = tempDir();
    const path = join(configDir, 'config.json');
    const first = await cli(['login', ...gw, '--api-key', t.creds.workspace.apiKey, '--profile', 'dev', '--json'], { configDir });
    expect(first.exitCode, first.stderr).toBe(0);
    expect(stderrLines(first.stderr)).toEqual([`The current profile is now "dev", saved in ${path}; to undo: agentpay config remove dev (the key stays valid)`]);

    const { email, password } = await account('acme');
    const second = await cli(['login', '--email', email, '--password', password, '--profile', 'acme', '--json'], { configDir });
    expect(second.exitCode, second.stderr).toBe(0);
    expect(Object.keys(json(second)).sort()).toEqual(['baseUrl', 'expiresAt', 'profile', 'whoami']);
    expect(stderrLines(second.stderr)).toEqual([`The current profile is now "acme", saved in ${path}, instead of "dev"; to go back: agentpay config use dev`]);

    expect((await cli(['config', 'use', 'dev'], { configDir })).exitCode).toBe(0);
    expect(json(await cli(['whoami', '--json'], { configDir })).tenant.id).toBe(t.creds.workspace.id);

    // the same key saved again under the current profile: no switch, no line
    const again = await cli(['login', ...gw, '--api-key', t.creds.workspace.apiKey, '--profile', 'dev', '--json'], { configDir });
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stderr).toBe('');
  });

  it('says when the current profile now holds another key, naming the one it replaced', async () => {
    const configDir = tempDir();
    await cli(['login', ...gw, '--api-key', t.creds.workspace.apiKey, '--json'], { configDir });
    const r = await cli(['login', ...gw, '--api-key', t.creds.provider.apiKey, '--json'], { configDir });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(stderrLines(r.stderr)).toEqual([
      expect.stringMatching(/^Profile "default" in .*config\.json now holds this key, replacing ap_w_\S+…\S{4} \(for https:\/\/127\.0\.0\.1:\d+\), which stays valid but is no longer saved; keep both next time with --profile NAME$/),
    ]);
  });
});

describe('a profile saved under a new name, in a directory with ./.agentpay', () => {
  it("takes ./.agentpay's gateway before the current profile's, as documented", async () => {
    const configDir = tempDir();
    const cwd = projectWithDevGateway();
    // the current profile is a gateway nothing listens on: used, the login would fail to connect
    saveProfile('elsewhere', { baseUrl: 'https://127.0.0.1:9', apiKey: 'ap_w_elsewhereelsewhereelsewhere' }, { AGENTPAY_CONFIG_DIR: configDir });
    const { email, password } = await account('local');
    const r = await cli(['login', '--email', email, '--password', password, '--profile', 'acme', '--json'], { configDir, cwd });
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    expect(json(r).baseUrl).toBe(t.baseUrl);
    expect(saved(configDir).profiles.acme).toMatchObject({ baseUrl: t.baseUrl, dataDir: join(cwd, '.agentpay'), ca: join(cwd, '.agentpay', 'tls', 'ca.pem') });
    expect(stderrLines(r.stderr)).toEqual([`The current profile is now "acme", saved in ${join(configDir, 'config.json')}, instead of "elsewhere"; to go back: agentpay config use elsewhere`]);
  });

  it('resolveConnection: ./.agentpay before the current profile for a new name; the named profile before ./.agentpay', () => {
    const env = { AGENTPAY_CONFIG_DIR: tempDir() };
    const cwd = projectWithDevGateway();
    saveProfile('elsewhere', { baseUrl: 'https://127.0.0.1:9', apiKey: 'ap_w_elsewhereelsewhereelsewhere' }, env);
    const saving = resolveConnection({ profile: 'acme' }, { env, cwd, optionalProfile: true });
    expect(saving).toMatchObject({ baseUrl: t.baseUrl, sources: { baseUrl: 'local' } });
    const using = resolveConnection({}, { env, cwd });
    expect(using).toMatchObject({ baseUrl: 'https://127.0.0.1:9', apiKey: 'ap_w_elsewhereelsewhereelsewhere', sources: { baseUrl: 'profile', apiKey: 'profile' } });
  });
});
