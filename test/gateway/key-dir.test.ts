/**
 * DATA_DIR/keys at start: a directory that already exists open to others (made by hand, a mounted
 * volume) is narrowed to 0700 and the start logs it; a signing key file that is missing stops the
 * start with a message naming the file and what to do, and no key is made in its place.
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway } from '../../src/gateway/server.js';
import { backendOptions } from '../helpers/gateway.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const newDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'agentpay-keydir-'));
  dirs.push(d);
  return d;
};
const modeOf = (p: string) => statSync(p).mode & 0o777;

async function start(dataDir: string, lines: Record<string, unknown>[] = []) {
  const stream = new Writable({
    write(c: Buffer, _e, done) {
      for (const l of c.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return startGateway({ ...(await backendOptions(dataDir)), dataDir, port: 0, httpPort: null, signingKeyRefreshMs: 0, logger: { level: 'info', stream } });
}

describe('an existing DATA_DIR/keys open to other users', () => {
  it('is made 0700 at the first start, which logs the mode it had', async () => {
    const dataDir = newDir();
    mkdirSync(join(dataDir, 'keys'), { mode: 0o755 });
    chmodSync(join(dataDir, 'keys'), 0o755); // whatever the umask
    const lines: Record<string, unknown>[] = [];
    const gw = await start(dataDir, lines);
    await gw.close();
    expect(modeOf(join(dataDir, 'keys'))).toBe(0o700);
    const logged = lines.find((l) => typeof l.msg === 'string' && l.msg.includes('signing keys directory was open to other users'));
    expect(logged, JSON.stringify(lines)).toMatchObject({ level: 40, dir: join(dataDir, 'keys'), previousMode: '0755' });
  });

  it('is made 0700 at a later start too, with its keys still in use', async () => {
    const dataDir = newDir();
    const first = await start(dataDir);
    const keyId = first.services.signingKeys.currentKeyId;
    await first.close();
    chmodSync(join(dataDir, 'keys'), 0o750);
    const lines: Record<string, unknown>[] = [];
    const again = await start(dataDir, lines);
    expect(again.services.signingKeys.currentKeyId).toBe(keyId);
    await again.close();
    expect(modeOf(join(dataDir, 'keys'))).toBe(0o700);
    expect(lines.some((l) => l.previousMode === '0750')).toBe(true);
  });

  it('a private one is left alone and nothing is logged about it', async () => {
    const dataDir = newDir();
    const lines: Record<string, unknown>[] = [];
    await (await start(dataDir, lines)).close();
    await (await start(dataDir, lines)).close();
    expect(modeOf(join(dataDir, 'keys'))).toBe(0o700);
    expect(lines.some((l) => typeof l.msg === 'string' && l.msg.includes('signing keys directory'))).toBe(false);
  });
});

describe('a missing signing key file', () => {
  it('stops the start naming keys/<id>.pem and saying to restore it, and makes no other key', async () => {
    const dataDir = newDir();
    const first = await start(dataDir);
    const keyId = first.services.signingKeys.currentKeyId;
    await first.close();
    unlinkSync(join(dataDir, 'keys', `${keyId}.pem`));

    const e = (await start(dataDir).then(
      () => undefined,
      (err: unknown) => err,
    )) as { message: string; details: Record<string, unknown> };
    expect(e.message).toBe(
      `the private key file of signing key ${keyId} (keys/${keyId}.pem in the data directory) is missing; restore it from a backup of the data directory ` +
        '(instances that share a database must share its keys directory too, or be given a key-encryption key: docs/deploy.md)',
    );
    expect(e.details).toEqual({ signingKeyId: keyId, file: `keys/${keyId}.pem` });
    expect(readdirSync(join(dataDir, 'keys'))).toEqual([]);
  });
});
