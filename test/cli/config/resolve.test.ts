/**
 * The CLI's plumbing in-process: which gateway, key and CA a command uses (flags > env >
 * profile > ./.agentpay), how failures become reports with exit codes and next steps,
 * and how tables print.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveConnection } from '../../../src/cli/client.js';
import { CliError, describeError, EXIT } from '../../../src/cli/errors/index.js';
import { renderTable } from '../../../src/cli/output.js';
import { saveProfile } from '../../../src/cli/profile.js';
import { AgentpayError } from '../../../packages/sdk/src/errors.js';
import { removeTempDirs, tempDir } from '../helpers.js';

/** a data dir as `agentpay dev` leaves it while running (this process stands in for the gateway) */
function devDataDir(dir: string, baseUrl: string): string {
  mkdirSync(join(dir, 'tls'), { recursive: true });
  writeFileSync(join(dir, 'tls', 'ca.pem'), 'CA');
  writeFileSync(join(dir, 'gateway.json'), JSON.stringify({ baseUrl, httpUrl: null, pid: process.pid }));
  writeFileSync(
    join(dir, 'dev-credentials.json'),
    JSON.stringify({ operatorKey: 'ap_o_op', workspace: { id: 'wsp_1', apiKey: 'ap_w_ws' }, provider: { id: 'prv_1', apiKey: 'ap_p_pr', walletId: 'wal_1' } }),
  );
  return dir;
}

afterAll(removeTempDirs);

describe('resolveConnection', () => {
  const cwd = tempDir();
  const env = { AGENTPAY_CONFIG_DIR: tempDir(), AGENTPAY_GATEWAY_URL: 'https://env:1', AGENTPAY_API_KEY: 'ap_w_env' };
  saveProfile('saved', { baseUrl: 'https://profile:1', apiKey: 'ap_w_profile', ca: '/profile-ca.pem' }, env);

  it('takes each field from flags, then env, then the profile', () => {
    const c = resolveConnection({ 'api-key': 'ap_w_flag' }, { env, cwd });
    expect(c).toMatchObject({ baseUrl: 'https://env:1', apiKey: 'ap_w_flag', profile: 'saved' });
    expect(c.sources).toEqual({ baseUrl: 'env', apiKey: 'flag' });
    const fromProfile = resolveConnection({}, { env: { AGENTPAY_CONFIG_DIR: env.AGENTPAY_CONFIG_DIR }, cwd });
    expect(fromProfile).toMatchObject({ baseUrl: 'https://profile:1', apiKey: 'ap_w_profile', ca: '/profile-ca.pem' });
  });

  it("uses a saved CA only with its own gateway's URL (a CA replaces the system roots); a CA flag applies to any", () => {
    const c = resolveConnection({}, { env, cwd });
    expect(c.baseUrl).toBe('https://env:1');
    expect(c.ca).toBeUndefined();
    expect(resolveConnection({ ca: 'my-ca.pem' }, { env, cwd }).ca).toBe(join(cwd, 'my-ca.pem'));
  });

  it('falls back to a local ./.agentpay dev gateway last, with the --as key', () => {
    const dir = tempDir();
    devDataDir(join(dir, '.agentpay'), 'https://local:1');
    const c = resolveConnection({ as: 'provider' }, { env: { AGENTPAY_CONFIG_DIR: tempDir() }, cwd: dir });
    expect(c).toMatchObject({ baseUrl: 'https://local:1', apiKey: 'ap_p_pr', ca: join(dir, '.agentpay', 'tls', 'ca.pem') });
    expect(c.sources.baseUrl).toBe('local');
  });

  it('ranks --data-dir with the flags, above the environment', () => {
    const dir = devDataDir(tempDir(), 'https://datadir:1');
    const c = resolveConnection({ 'data-dir': dir, as: 'operator' }, { env, cwd });
    expect(c).toMatchObject({ baseUrl: 'https://datadir:1', apiKey: 'ap_o_op', dataDir: dir });
  });

  it('with --data-dir of a stopped gateway, says so rather than using another source\'s URL', () => {
    const dir = devDataDir(tempDir(), 'https://stopped:1');
    writeFileSync(join(dir, 'gateway.json'), JSON.stringify({ baseUrl: 'https://stopped:1', httpUrl: null, pid: 2 ** 22 + 1 })); // no such process
    expect(() => resolveConnection({ 'data-dir': dir }, { env, cwd })).toThrow(/no gateway is running on the data dir/);
  });

  it('refuses a named profile that does not exist, unless saving one (login, signup)', () => {
    expect(() => resolveConnection({ profile: 'ghost' }, { env, cwd })).toThrow(/no profile named "ghost"/);
    expect(resolveConnection({ profile: 'ghost' }, { env, cwd, optionalProfile: true }).profile).toBeUndefined();
  });

  it("gives a profile being saved (login, signup --profile NEW) the current profile's gateway, CA and data dir, not its key", () => {
    const configEnv = { AGENTPAY_CONFIG_DIR: tempDir() };
    const dataDir = devDataDir(tempDir(), 'https://live:1');
    saveProfile('dev', { baseUrl: 'https://saved:1', apiKey: 'ap_w_dev', ca: '/dev-ca.pem', dataDir }, configEnv);
    const c = resolveConnection({ profile: 'acme' }, { env: configEnv, cwd, optionalProfile: true });
    expect(c).toMatchObject({ baseUrl: 'https://live:1', ca: '/dev-ca.pem', profileDataDir: dataDir });
    expect(c.apiKey).toBeUndefined();
    expect(c.profile).toBeUndefined(); // no profile named acme was read
    // without a current profile there is still no gateway to guess
    expect(resolveConnection({ profile: 'acme' }, { env: { AGENTPAY_CONFIG_DIR: tempDir() }, cwd, optionalProfile: true }).baseUrl).toBeUndefined();
  });
});

describe('describeError', () => {
  it('maps 401 to exit 4 and a login hint', () => {
    const r = describeError(new AgentpayError('UNAUTHORIZED', 'API key revoked', { status: 401 }));
    expect(r).toMatchObject({ code: 'UNAUTHORIZED', exit: EXIT.UNAUTHENTICATED, tryNext: expect.stringContaining('agentpay login') });
  });

  it('names the missing scope in the hint for 403 FORBIDDEN', () => {
    const r = describeError(new AgentpayError('FORBIDDEN', 'this API key lacks the scope approvals:write', { status: 403, details: { scope: 'approvals:write' } }));
    expect(r.exit).toBe(EXIT.REFUSED);
    expect(r.tryNext).toBe('create a key with that scope: agentpay keys create --scopes approvals:write');
  });

  it('reports a refused connection as unreachable (exit 3), naming the gateway', () => {
    const err = new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
    const r = describeError(err, { baseUrl: 'https://127.0.0.1:4402' });
    expect(r).toMatchObject({ code: 'GATEWAY_UNREACHABLE', exit: EXIT.UNREACHABLE, message: 'cannot reach the gateway at https://127.0.0.1:4402 (ECONNREFUSED)' });
  });

  it('keeps a CliError as it is, and reports anything unexpected as a bug (exit 70)', () => {
    expect(describeError(new CliError('KEY_FILE_EXISTS', 'exists', { tryNext: 'choose another' }))).toMatchObject({ code: 'KEY_FILE_EXISTS', exit: 1, tryNext: 'choose another' });
    expect(describeError(new RangeError('boom'))).toMatchObject({ code: 'INTERNAL', exit: EXIT.BUG, bug: true });
  });
});

describe('renderTable', () => {
  it('aligns columns, prints amounts as given, and shows "-" for empty cells', () => {
    const rows = [
      { id: 'wal_1', amount: '100', memo: null },
      { id: 'wal_22', amount: '1000000000000001', memo: 'x' },
    ];
    const text = renderTable(rows, [
      { header: 'ID', get: (r) => r.id },
      { header: 'AMOUNT', get: (r) => r.amount },
      { header: 'MEMO', get: (r) => r.memo },
    ]);
    expect(text.split('\n')).toEqual(['ID      AMOUNT            MEMO', 'wal_1   100               -', 'wal_22  1000000000000001  x']);
  });
});
