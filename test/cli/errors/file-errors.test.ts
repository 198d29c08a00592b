/**
 * How the CLI reports what a person can fix on their own machine: a file or directory in
 * the way, no permission, a database file SQLite refuses. These are FILE_ERROR and
 * DATABASE_ERROR (exit 1) naming the path and the next step, never "a bug in agentpay"; a
 * genuine bug stays INTERNAL (exit 70). And a key file OpenSSL cannot parse is no TLS failure.
 */
import { spawnSync } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { describeError, EXIT } from '../../../src/cli/errors/index.js';
import { writeFileAtomic } from '../../../src/core/files.js';
import { startGateway } from '../../../src/gateway/server.js';
import { backendOptions } from '../../helpers/gateway.js';
import { backendEnv, BIN, cli, json, removeTempDirs, startGatewayProcess, tempDir } from '../helpers.js';

afterAll(removeTempDirs);

/** what `fn` throws */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected an error');
}

describe('describeError: file-system errors', () => {
  it('reports a directory where a file is read as FILE_ERROR (exit 1), naming the data dir when the error names no path', () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'mode'));
    const r = describeError(thrown(() => readFileSync(join(dir, 'mode'))), { dataDir: dir });
    expect(r).toMatchObject({ code: 'FILE_ERROR', exit: EXIT.REFUSED, message: `a file in ${dir}: is a directory, expected a file`, details: { cause: 'EISDIR', syscall: 'read' } });
    expect(r.bug).toBeUndefined();
    expect(r.tryNext).toBe(`find the directory where a file belongs in ${dir} and move it away`);
  });

  it('names the file an atomic write could not replace (a directory), not its temporary file', () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'gateway.json'));
    const r = describeError(thrown(() => writeFileAtomic(join(dir, 'gateway.json'), '{}')));
    expect(r).toMatchObject({
      code: 'FILE_ERROR',
      exit: EXIT.REFUSED,
      message: `${join(dir, 'gateway.json')}: is a directory, expected a file`,
      details: { path: join(dir, 'gateway.json'), cause: 'EISDIR', syscall: 'rename' },
    });
    expect(r.tryNext).toContain(`move the directory at ${join(dir, 'gateway.json')} away`);
  });

  it('reports a file where a directory must be made, and a path under a file', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'tls'), 'x');
    const over = describeError(thrown(() => mkdirSync(join(dir, 'tls'), { recursive: true })));
    expect(over).toMatchObject({ code: 'FILE_ERROR', message: `${join(dir, 'tls')}: is a file, expected a directory`, details: { cause: 'EEXIST', syscall: 'mkdir' } });
    expect(over.tryNext).toBe(`move the file ${join(dir, 'tls')} aside; agentpay makes the directory itself`);
    const under = describeError(thrown(() => readFileSync(join(dir, 'tls', 'server.pem'))));
    expect(under).toMatchObject({ code: 'FILE_ERROR', exit: EXIT.REFUSED, message: `${join(dir, 'tls', 'server.pem')}: a part of this path is a file, expected a directory` });
  });

  it('points a permission error on a file that could not be made at the directory that refused it', () => {
    const dir = tempDir();
    // as Node reports it (tests may run as root, who is never refused): creating the lock's temporary file
    const tmp = join(dir, '.gateway.lock.0123456789abcdef.tmp');
    const err = Object.assign(new Error(`EACCES: permission denied, open '${tmp}'`), { errno: -13, code: 'EACCES', syscall: 'open', path: tmp });
    const r = describeError(err);
    expect(r).toMatchObject({ code: 'FILE_ERROR', exit: EXIT.REFUSED, message: `${join(dir, 'gateway.lock')}: permission denied`, details: { path: join(dir, 'gateway.lock'), cause: 'EACCES' } });
    expect(r.tryNext).toBe(`run as the user that owns ${dir}, or give yours access (ls -ld ${dir} shows owner and mode)`);
  });

  it('reports a full disk and a read-only file system in plain words', () => {
    const enospc = Object.assign(new Error('ENOSPC: no space left on device, write'), { errno: -28, code: 'ENOSPC', syscall: 'write' });
    expect(describeError(enospc, { dataDir: '/srv/agentpay' })).toMatchObject({ code: 'FILE_ERROR', message: 'a file in /srv/agentpay: no space left on the device', tryNext: 'free some disk space, then retry' });
    const erofs = Object.assign(new Error("EROFS: read-only file system, mkdir '/ro/data'"), { errno: -30, code: 'EROFS', syscall: 'mkdir', path: '/ro/data' });
    expect(describeError(erofs)).toMatchObject({ code: 'FILE_ERROR', message: '/ro/data: is on a read-only file system', tryNext: 'use a writable location (e.g. another --data-dir)' });
  });

  it('keeps bugs as bugs: a TypeError, and a command that could not be spawned, are INTERNAL (exit 70)', () => {
    expect(describeError(thrown(() => (undefined as unknown as { id: string }).id))).toMatchObject({ code: 'INTERNAL', exit: EXIT.BUG, bug: true });
    const spawned = spawnSync('agentpay-no-such-command-xyz').error;
    expect(spawned).toMatchObject({ code: 'ENOENT' });
    expect(describeError(spawned)).toMatchObject({ code: 'INTERNAL', exit: EXIT.BUG });
  });
});

describe('describeError: SQLite errors', () => {
  it('reports a file that is not a database as DATABASE_ERROR naming the data dir database, with what to do', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'agentpay.db'), 'not a database '.repeat(500));
    const err = thrown(() => new Database(join(dir, 'agentpay.db')).pragma('journal_mode = WAL'));
    const r = describeError(err, { dataDir: dir });
    expect(r).toMatchObject({
      code: 'DATABASE_ERROR',
      exit: EXIT.REFUSED,
      message: `the gateway's database ${join(dir, 'agentpay.db')} is not an SQLite database (SQLITE_NOTADB)`,
      details: { path: join(dir, 'agentpay.db'), cause: 'SQLITE_NOTADB' },
    });
    expect(r.tryNext).toMatch(/^restore agentpay\.db .* from a backup; a development data dir .* agentpay dev$/);
    // without a data dir it is still the database, not a bug
    expect(describeError(err)).toMatchObject({ code: 'DATABASE_ERROR', message: "the gateway's database is not an SQLite database (SQLITE_NOTADB)" });
  });

  it('reports a database that cannot be opened (a directory in its place) by its primary code', () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'agentpay.db'));
    const r = describeError(thrown(() => new Database(join(dir, 'agentpay.db'))), { dataDir: dir });
    expect(r).toMatchObject({ code: 'DATABASE_ERROR', exit: EXIT.REFUSED, details: { cause: expect.stringMatching(/^SQLITE_CANTOPEN/) } });
    expect(r.message).toContain('cannot be opened');
  });

  it('keeps SQLite errors of agentpay\'s own making (a constraint) as INTERNAL', () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY)');
    db.exec('INSERT INTO t VALUES (1)');
    expect(describeError(thrown(() => db.exec('INSERT INTO t VALUES (1)')))).toMatchObject({ code: 'INTERNAL', exit: EXIT.BUG });
  });
});

describe('describeError: TLS', () => {
  it('does not report a key OpenSSL cannot parse (ERR_OSSL_*) as a TLS failure: no connection was made', () => {
    const err = thrown(() => createPrivateKey('-----BEGIN PRIVATE KEY-----\ngarbage\n-----END PRIVATE KEY-----\n'));
    expect((err as { code?: string }).code).toMatch(/^ERR_OSSL_/);
    const r = describeError(err, { baseUrl: 'https://127.0.0.1:4402' });
    expect(r.code).not.toBe('TLS_FAILED');
    expect(r.message).not.toContain('TLS connection');
  });

  it('still reports an untrusted certificate behind fetch as TLS_FAILED with the CA hint', () => {
    const err = new TypeError('fetch failed', { cause: Object.assign(new Error('self-signed certificate'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }) });
    const r = describeError(err, { baseUrl: 'https://127.0.0.1:4402' });
    expect(r).toMatchObject({ code: 'TLS_FAILED', exit: EXIT.UNREACHABLE, details: { cause: 'DEPTH_ZERO_SELF_SIGNED_CERT' } });
    expect(r.tryNext).toContain('--ca PATH');
  });
});

const devArgs = (dataDir: string, port = '0') => ['dev', '--data-dir', dataDir, '--port', port, '--http-port', '0', '--quiet', '--json'];

/** `agentpay dev --json` on a broken data dir: the error envelope, the exit code, stderr */
async function devFails(dataDir: string, configDir: string) {
  const r = await cli(devArgs(dataDir), { configDir });
  expect(r.exitCode, r.stderr).toBe(1);
  expect(r.stderr).not.toContain('This is a bug');
  expect(r.stderr).not.toMatch(/^\s+at /m); // no stack
  expect(existsSync(join(dataDir, 'gateway.lock'))).toBe(false); // released on the way out
  return json(r).error as { code: string; message: string; details: Record<string, unknown> };
}

describe('agentpay dev on a data dir it cannot use', () => {
  const configDir = tempDir();

  it('names a directory where gateway.json belongs (FILE_ERROR, exit 1)', async () => {
    const dataDir = tempDir();
    mkdirSync(join(dataDir, 'gateway.json'));
    expect(await devFails(dataDir, configDir)).toEqual({
      code: 'FILE_ERROR',
      message: `${join(dataDir, 'gateway.json')}: is a directory, expected a file`,
      details: { path: join(dataDir, 'gateway.json'), cause: 'EISDIR', syscall: 'rename' },
    });
  });

  it('names the file when one it reads is a directory (the mode marker, the sandbox webhook secret)', async () => {
    for (const name of ['mode', join('rails', 'sandbox-webhook.secret')]) {
      // a data dir a sandbox gateway has run on, then the file replaced by a directory
      const dataDir = tempDir();
      await (await startGateway({ ...(await backendOptions(dataDir)), dataDir, tls: false, httpPort: null, port: 0, config: { mode: 'sandbox' } })).close();
      rmSync(join(dataDir, name));
      mkdirSync(join(dataDir, name));
      expect(await devFails(dataDir, configDir), name).toMatchObject({ code: 'FILE_ERROR', message: `${join(dataDir, name)}: is a directory, expected a file` });
    }
  });

  it('names a file where the tls directory belongs', async () => {
    const dataDir = tempDir();
    writeFileSync(join(dataDir, 'tls'), 'x');
    expect(await devFails(dataDir, configDir)).toMatchObject({ code: 'FILE_ERROR', message: `${join(dataDir, 'tls')}: is a file, expected a directory` });
  });

  // sqlite-only: the SQLite file of the data dir (a PostgreSQL gateway does not read it)
  it.skipIf(process.env.AGENTPAY_TEST_BACKEND === 'postgres')('names a garbage agentpay.db (DATABASE_ERROR, exit 1)', async () => {
    const dataDir = tempDir();
    writeFileSync(join(dataDir, 'agentpay.db'), 'not a database '.repeat(500));
    expect(await devFails(dataDir, configDir)).toEqual({
      code: 'DATABASE_ERROR',
      message: `the gateway's database ${join(dataDir, 'agentpay.db')} is not an SQLite database (SQLITE_NOTADB)`,
      details: { path: join(dataDir, 'agentpay.db'), cause: 'SQLITE_NOTADB' },
    });
  });

  it('reports an unreadable file in the data dir as FILE_ERROR naming it, not as a port it may not listen on', async () => {
    const dataDir = tempDir();
    const first = await startGatewayProcess(devArgs(dataDir), { configDir });
    expect((await first.stop()).exitCode).toBe(0);
    const cert = join(dataDir, 'tls', 'server.pem');
    // root reads everything: as root, run the CLI as nobody, owning the data dir but for the certificate
    const asRoot = process.getuid?.() === 0;
    const nobody = 65534;
    if (asRoot) for (const p of [dataDir, ...readdirSync(dataDir, { recursive: true, encoding: 'utf8' }).map((f) => join(dataDir, f))]) chownSync(p, nobody, nobody);
    if (asRoot) chownSync(cert, 0, 0);
    else chmodSync(cert, 0o000);
    const home = tempDir();
    if (asRoot) chownSync(home, nobody, nobody);
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('AGENTPAY_')) env[k] = v;
    const r = await execa(process.execPath, [BIN, ...devArgs(dataDir)], {
      // on the postgres project, the database the first run used (backendEnv: the data dir's)
      env: { ...env, ...(await backendEnv(devArgs(dataDir), { configDir })), HOME: home, NODE_ENV: 'production', AGENTPAY_CONFIG_DIR: home },
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
      ...(asRoot ? { uid: nobody, gid: nobody } : {}),
    });
    expect(r.exitCode, String(r.stderr)).toBe(1);
    expect(JSON.parse(String(r.stdout)).error).toEqual({
      code: 'FILE_ERROR',
      message: `${cert}: permission denied`,
      details: { path: cert, cause: 'EACCES', syscall: 'open' },
    });
  });
});
