/**
 * What a gateway keeps in its data directory is its owner's alone and survives a crash
 * whole: every directory it makes is 0700 and every file 0600 (the SQLite database and
 * its -wal/-shm files hold password hashes and emails), a directory given to it is left
 * as it is, a cut webhook secret is refused at start, temporary files never follow a
 * planted symlink, and request logs carry no query values.
 */
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureDevCredentials } from '../../src/gateway/dev-credentials.js';
import { ensureWebhookSecret, WEBHOOK_SECRET_LENGTH, webhookSecretPath } from '../../src/rails/sandbox/secret.js';
import { privateKeyDir } from '../../src/domain/payments/signing-keys.js';
import { redactUrl } from '../../src/gateway/app.js';
import { startGateway, type RunningGateway } from '../../src/gateway/server.js';
import { ensureTls } from '../../src/gateway/tls.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { modeOf, tempDirs } from '../helpers/temp-dirs.js';

const temp = tempDirs('agentpay-files-');
const running: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const g of running.splice(0)) await g.close();
  temp.removeAll();
});
const tempDir = temp.make;
const mode = modeOf;

/** Every entry under `dir` (recursively) with its mode, as `relative path: octal`. */
function modesUnder(dir: string, rel = ''): string[] {
  return readdirSync(join(dir, rel), { withFileTypes: true }).flatMap((e) => {
    const r = rel ? `${rel}/${e.name}` : e.name;
    const line = `${r}: ${mode(join(dir, r)).toString(8)}`;
    return e.isDirectory() ? [line, ...modesUnder(dir, r)] : [line];
  });
}

async function gateway(dataDir: string, logger: object | false = false): Promise<RunningGateway> {
  const gw = await startGateway({ dataDir, port: 0, httpPort: null, logger });
  running.push(gw);
  return gw;
}

describe('the data directory of a running gateway', () => {
  it('holds only 0700 directories and 0600 files: database, -wal and -shm, keys, TLS, secrets, credentials', async () => {
    const t: TestGateway = await startTestGateway();
    running.push(t);
    await t.newAgentWallet(t.workspace); // a write through the API
    const entries = modesUnder(t.dataDir);
    for (const f of ['agentpay.db', 'agentpay.db-wal', 'agentpay.db-shm', 'dev-credentials.json', 'rails/sandbox-webhook.secret', 'tls/ca.pem', 'tls/server.pem']) {
      expect(entries.some((e) => e.startsWith(`${f}: `)), f).toBe(true);
    }
    const wrong = entries.filter((e) => {
      const [rel, m] = e.split(': ');
      return m !== (statSync(join(t.dataDir, rel!)).isDirectory() ? '700' : '600');
    });
    expect(wrong).toEqual([]);
  });

  it('leaves an existing data directory mode alone but creates everything inside it owner-only', async () => {
    const dataDir = join(tempDir(), 'project');
    mkdirSync(dataDir, { mode: 0o755 });
    await gateway(dataDir);
    expect(mode(dataDir)).toBe(0o755);
    expect(mode(join(dataDir, 'agentpay.db'))).toBe(0o600);
    for (const d of ['keys', 'tls', 'rails']) expect(mode(join(dataDir, d)), d).toBe(0o700);
  });

  it('narrows a database file an older version left readable by others to 0600, keeping its data', async () => {
    const dataDir = tempDir();
    const first = await gateway(dataDir);
    const platformKeyId = first.services.signingKeys.currentKeyId;
    await first.close();
    running.splice(0);
    chmodSync(join(dataDir, 'agentpay.db'), 0o644);
    const again = await gateway(dataDir);
    expect(mode(join(dataDir, 'agentpay.db'))).toBe(0o600);
    expect(again.services.signingKeys.currentKeyId).toBe(platformKeyId);
  });
});

describe('the sandbox webhook secret', () => {
  it('is made once, as long as a made secret, 0600, with no temporary file left, and the same on later starts', () => {
    const dataDir = tempDir();
    const secret = ensureWebhookSecret(dataDir);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{32}$/);
    expect(secret.length).toBe(WEBHOOK_SECRET_LENGTH);
    expect(mode(webhookSecretPath(dataDir))).toBe(0o600);
    expect(readdirSync(join(dataDir, 'rails'))).toEqual(['sandbox-webhook.secret']);
    expect(ensureWebhookSecret(dataDir)).toBe(secret);
  });

  it.each([
    ['empty (a crash between create and write)', ''],
    ['cut short', 'whsec_abc\n'],
  ])('refuses to start a gateway when the file is %s, naming the file and saying to delete it', async (_what, content) => {
    const dataDir = tempDir();
    mkdirSync(join(dataDir, 'rails'), { recursive: true, mode: 0o700 });
    writeFileSync(webhookSecretPath(dataDir), content, { mode: 0o600 });
    const refusal = await startGateway({ dataDir, port: 0, httpPort: null }).then(
      (gw) => void running.push(gw),
      (e: unknown) => e as Error,
    );
    expect(refusal?.message).toContain(webhookSecretPath(dataDir));
    expect(refusal?.message).toMatch(/delete the file and restart/);
  });
});

describe('temporary files in the data directory', () => {
  it('dev-credentials.json is written without following a symlink planted at its old temporary name', async () => {
    const t = await startTestGateway();
    running.push(t);
    const victim = join(tempDir(), 'victim');
    writeFileSync(victim, 'untouched');
    rmSync(join(t.dataDir, 'dev-credentials.json'));
    symlinkSync(victim, join(t.dataDir, 'dev-credentials.json.tmp'));
    const creds = await ensureDevCredentials(t.gw.services.ctx, t.dataDir);
    expect(readFileSync(victim, 'utf8')).toBe('untouched');
    expect(JSON.parse(readFileSync(join(t.dataDir, 'dev-credentials.json'), 'utf8'))).toEqual(creds);
    expect(mode(join(t.dataDir, 'dev-credentials.json'))).toBe(0o600);
  });

  it('TLS files are written without following symlinks planted at their old temporary names', async () => {
    const dataDir = tempDir();
    mkdirSync(join(dataDir, 'tls'), { mode: 0o700 });
    const victim = join(tempDir(), 'victim');
    writeFileSync(victim, 'untouched');
    for (const f of ['ca.pem', 'ca-key.pem', 'server.pem', 'server-key.pem']) symlinkSync(victim, join(dataDir, 'tls', `${f}.${process.pid}.tmp`));
    const m = await ensureTls(dataDir);
    expect(readFileSync(victim, 'utf8')).toBe('untouched');
    expect(readFileSync(m.keyPath, 'utf8')).toBe(m.key);
    for (const f of ['ca.pem', 'ca-key.pem', 'server.pem', 'server-key.pem']) expect(mode(join(dataDir, 'tls', f)), f).toBe(0o600);
  });

  it('a signing private key is written whole, 0600, never over an existing key, with no temporary file left', () => {
    const dataDir = tempDir();
    const files = privateKeyDir(dataDir);
    files.write('sk_one', 'PEM ONE');
    expect(() => files.write('sk_one', 'PEM TWO')).toThrow(expect.objectContaining({ code: 'EEXIST' }));
    expect(files.read('sk_one')).toBe('PEM ONE');
    expect(mode(join(dataDir, 'keys', 'sk_one.pem'))).toBe(0o600);
    expect(readdirSync(join(dataDir, 'keys'))).toEqual(['sk_one.pem']);
  });
});

describe('request logs', () => {
  it('redactUrl keeps the path and the parameter names and drops every value', () => {
    expect(redactUrl('/v1/whoami')).toBe('/v1/whoami');
    expect(redactUrl('/v1/whoami?api_key=ap_x&limit=5')).toBe('/v1/whoami?api_key=[redacted]&limit=[redacted]');
    expect(redactUrl('/v1/x?ap_bare_key')).toBe('/v1/x?[redacted]');
    expect(redactUrl('/v1/x?')).toBe('/v1/x?');
  });

  it('log the path with query values redacted, the method, the request id and the remote address, nothing else', async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _enc, done) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    });
    const gw = await gateway(tempDir(), { level: 'info', stream });
    const secret = 'ap_live_DO_NOT_LOG_0123456789';
    const status = await new Promise<number>((resolve, reject) => {
      https
        .get(`${gw.baseUrl}/v1/whoami?api_key=${secret}&verbose=1`, { ca: gw.tls!.ca, headers: { 'x-test': 'header' } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        })
        .on('error', reject);
    });
    expect(status).toBe(401);
    await gw.close();
    running.splice(0);

    expect(lines.join('\n')).not.toContain(secret);
    // one line per request, at response time (request-log.ts)
    const reqs = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'request');
    expect(reqs).toHaveLength(1);
    for (const req of reqs) {
      expect(Object.keys(req).sort()).toEqual(['code', 'hostname', 'ip', 'level', 'method', 'ms', 'msg', 'pid', 'reqId', 'status', 'time', 'url']);
      expect(req).toMatchObject({ method: 'GET', url: '/v1/whoami?api_key=[redacted]&verbose=[redacted]', ip: '127.0.0.1', status: 401, code: 'UNAUTHORIZED' });
      expect(req.reqId).toMatch(/^req_/);
    }
  });
});
