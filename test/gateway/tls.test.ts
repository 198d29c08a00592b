/**
 * ensureTls (src/gateway/tls.ts): the local CA and the server certificate are made once
 * and reused; an expiring server certificate is renewed with the existing CA, so clients
 * that trust ca.pem keep working; a new CA is made only when the CA is missing,
 * unreadable, not its key's, or expiring (and then the server certificate with it).
 */
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createServer, type Server } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureTls, type TlsMaterial } from '../../src/gateway/tls.js';

const DAY = 24 * 60 * 60 * 1000;
const FILES = ['ca.pem', 'ca-key.pem', 'server.pem', 'server-key.pem'] as const;
type Files = Record<(typeof FILES)[number], string>;

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'agentpay-tls-'));
  dirs.push(d);
  return d;
}

function files(dataDir: string): Files {
  return Object.fromEntries(FILES.map((f) => [f, readFileSync(join(dataDir, 'tls', f), 'utf8')])) as Files;
}

/** The server certificate is signed by the CA, names the CA as issuer, and is valid at `at`. */
function expectLeafOf(m: TlsMaterial, at: number): void {
  const leaf = new X509Certificate(m.cert);
  const ca = new X509Certificate(m.ca);
  expect(leaf.checkIssued(ca)).toBe(true);
  expect(leaf.verify(ca.publicKey)).toBe(true);
  expect(Date.parse(leaf.validFrom)).toBeLessThanOrEqual(at);
  expect(Date.parse(leaf.validTo)).toBeGreaterThan(at + DAY);
}

/** A real TLS handshake with the material, by a client that trusts only `trustedCa`. */
async function handshake(m: TlsMaterial, trustedCa: string): Promise<void> {
  const server: Server = createServer({ cert: m.cert, key: m.key }, (s) => s.end());
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  const { port } = server.address() as { port: number };
  try {
    await new Promise<void>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port, ca: trustedCa }, () => {
        socket.end();
        resolve();
      });
      socket.on('error', reject);
    });
  } finally {
    await new Promise<void>((res) => server.close(() => res()));
  }
}

describe('ensureTls', () => {
  it('makes a CA (10 years) and a server certificate it signs (825 days), keys 0600 in a 0700 directory', async () => {
    const dataDir = tempDir();
    const now = Date.now();
    const m = await ensureTls(dataDir, now);
    expectLeafOf(m, now);
    expect(Date.parse(new X509Certificate(m.ca).validTo)).toBeGreaterThan(now + 3649 * DAY);
    expect(Date.parse(new X509Certificate(m.cert).validTo)).toBeGreaterThan(now + 824 * DAY);
    expect(statSync(join(dataDir, 'tls')).mode & 0o777).toBe(0o700);
    for (const f of ['ca-key.pem', 'server-key.pem']) expect(statSync(join(dataDir, 'tls', f)).mode & 0o777, f).toBe(0o600);
    await handshake(m, m.ca);
  });

  it('reuses every file unchanged while the server certificate is valid for more than a day', async () => {
    const dataDir = tempDir();
    const now = Date.now();
    await ensureTls(dataDir, now);
    const before = files(dataDir);
    await ensureTls(dataDir, now + 823 * DAY);
    expect(files(dataDir)).toEqual(before);
  });

  it('renews an expired server certificate with the existing CA, so a client trusting the old ca.pem still connects', async () => {
    const dataDir = tempDir();
    // a set made 900 days ago: its server certificate (825 days) has expired, its CA has not
    const made = await ensureTls(dataDir, Date.now() - 900 * DAY);
    expect(Date.parse(new X509Certificate(made.cert).validTo)).toBeLessThan(Date.now());
    const before = files(dataDir);

    const now = Date.now();
    const renewed = await ensureTls(dataDir, now);
    const after = files(dataDir);
    expect(after['ca.pem']).toBe(before['ca.pem']);
    expect(after['ca-key.pem']).toBe(before['ca-key.pem']);
    expect(after['server.pem']).not.toBe(before['server.pem']);
    expect(after['server-key.pem']).not.toBe(before['server-key.pem']);
    expect(renewed.ca).toBe(made.ca);
    expect(renewed).toMatchObject({ cert: after['server.pem'], key: after['server-key.pem'] });
    expectLeafOf(renewed, now);
    expect(statSync(join(dataDir, 'tls', 'server-key.pem')).mode & 0o777).toBe(0o600);
    await handshake(renewed, made.ca);
  });

  it('renews the server certificate with the existing CA when it expires within a day, or its files are missing', async () => {
    const dataDir = tempDir();
    const now = Date.now();
    const made = await ensureTls(dataDir, now);
    const soon = now + 825 * DAY - DAY / 2;
    const renewed = await ensureTls(dataDir, soon);
    expect(renewed.ca).toBe(made.ca);
    expect(renewed.cert).not.toBe(made.cert);
    expectLeafOf(renewed, soon);

    unlinkSync(join(dataDir, 'tls', 'server-key.pem'));
    const again = await ensureTls(dataDir, soon);
    expect(again.ca).toBe(made.ca);
    expect(again.cert).not.toBe(renewed.cert);
    expectLeafOf(again, soon);
  });

  it('reissues a server certificate that another CA signed, keeping the CA on disk', async () => {
    const dataDir = tempDir();
    const now = Date.now();
    await ensureTls(dataDir, now);
    const other = await ensureTls(tempDir(), now);
    writeFileSync(join(dataDir, 'tls', 'server.pem'), other.cert);
    writeFileSync(join(dataDir, 'tls', 'server-key.pem'), other.key);
    const ca = files(dataDir)['ca.pem'];
    const m = await ensureTls(dataDir, now);
    expect(m.ca).toBe(ca);
    expect(m.cert).not.toBe(other.cert);
    expectLeafOf(m, now);
  });

  it('makes a new CA and server certificate when the CA expires within 30 days', async () => {
    const dataDir = tempDir();
    const now = Date.now();
    const made = await ensureTls(dataDir, now);
    const late = now + 3650 * DAY - 10 * DAY;
    const m = await ensureTls(dataDir, late);
    expect(m.ca).not.toBe(made.ca);
    expect(Date.parse(new X509Certificate(m.ca).validTo)).toBeGreaterThan(late + 3649 * DAY);
    expectLeafOf(m, late);
  });

  const broken: [string, (tls: string) => void][] = [
    ['ca.pem is missing', (tls) => unlinkSync(join(tls, 'ca.pem'))],
    ['ca-key.pem is missing', (tls) => unlinkSync(join(tls, 'ca-key.pem'))],
    ['ca.pem is not a certificate', (tls) => writeFileSync(join(tls, 'ca.pem'), 'not a certificate\n')],
    ['ca-key.pem is not a key', (tls) => writeFileSync(join(tls, 'ca-key.pem'), 'not a key\n')],
    ['ca-key.pem does not match ca.pem', (tls) => writeFileSync(join(tls, 'ca-key.pem'), readFileSync(join(tls, 'server-key.pem')))],
  ];
  for (const [what, breakIt] of broken) {
    it(`makes a new CA and server certificate when ${what}`, async () => {
      const dataDir = tempDir();
      const now = Date.now();
      const made = await ensureTls(dataDir, now);
      breakIt(join(dataDir, 'tls'));
      const m = await ensureTls(dataDir, now);
      expect(m.ca).not.toBe(made.ca);
      expect(m.cert).not.toBe(made.cert);
      expect(files(dataDir)).toMatchObject({ 'ca.pem': m.ca, 'server.pem': m.cert, 'server-key.pem': m.key });
      expectLeafOf(m, now);
      await handshake(m, m.ca);
    });
  }
});
