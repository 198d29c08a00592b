/**
 * TlsRenewal (src/gateway/tls.ts) in a running gateway: the server certificate is
 * checked while the gateway runs, and a renewed one (same CA) is swapped into the
 * HTTPS server for new handshakes, without a restart; connections already open keep
 * working. A failed check is logged and tried again; it never stops the gateway.
 */
import { X509Certificate } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { connect, type TLSSocket } from 'node:tls';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startGateway, type RunningGateway } from '../../src/gateway/server.js';
import { backendOptions } from '../helpers/gateway.js';
import { ensureTls } from '../../src/gateway/tls.js';

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

/**
 * A gateway on a data directory whose server certificate (825 days) was made 824 days
 * minus an hour ago: still good for a day and an hour, so the start keeps it, and a
 * check two hours later finds it within the one-day renewal window.
 */
async function gatewayWithAgingCertificate(opts: { tlsCheckIntervalMs?: number; logLines?: string[] } = {}): Promise<{ gw: RunningGateway; ca: string; dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'agentpay-tls-renewal-'));
  cleanup.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const made = await ensureTls(dataDir, Date.now() - 824 * DAY + HOUR);
  const logger = opts.logLines
    ? { level: 'info', stream: new Writable({ write: (chunk, _enc, done) => (opts.logLines!.push(String(chunk)), done()) }) }
    : false;
  const gw = await startGateway({ ...(await backendOptions(dataDir)), dataDir, port: 0, httpPort: null, logger, tlsCheckIntervalMs: opts.tlsCheckIntervalMs ?? 0, signingKeyRefreshMs: 0 });
  cleanup.push(() => gw.close());
  expect(gw.tls!.cert).toBe(made.cert); // the start kept it
  return { gw, ca: made.ca, dataDir };
}

/** A new TLS connection to the gateway by a client that trusts only `ca`; closed after the test. */
function tlsConnect(gw: RunningGateway, ca: string): Promise<TLSSocket> {
  const { port } = new URL(gw.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: Number(port), ca }, () => resolve(socket));
    // before the gateway closes: it waits for connections that never sent a request
    cleanup.push(() => void socket.destroy());
    socket.once('error', reject);
  });
}

/** GET /health over an open TLS connection; resolves with the raw HTTP response. */
function getHealth(socket: TLSSocket): Promise<string> {
  return new Promise((resolve, reject) => {
    let response = '';
    socket.on('data', (d: Buffer) => (response += d.toString('utf8')));
    socket.once('end', () => resolve(response));
    socket.once('error', reject);
    socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
  });
}

function expectHealthy(response: string): void {
  expect(response).toMatch(/^HTTP\/1\.1 200 /);
  expect(response).toContain('"status":"ok"');
}

function caFingerprint(dataDir: string): string {
  return new X509Certificate(readFileSync(join(dataDir, 'tls', 'ca.pem'))).fingerprint256;
}

describe('TlsRenewal in a running gateway', () => {
  it('renews a server certificate within a day of its end under the same CA: new handshakes get it, open connections keep working', async () => {
    const { gw, ca, dataDir } = await gatewayWithAgingCertificate();
    const caBefore = caFingerprint(dataDir);
    const old = await tlsConnect(gw, ca);
    const oldCert = old.getPeerCertificate();
    expect(Date.parse(oldCert.valid_to)).toBeLessThan(Date.now() + DAY + 2 * HOUR);

    expect(await gw.tlsRenewal!.check(Date.now() + 2 * HOUR)).toBe(true);

    const fresh = await tlsConnect(gw, ca);
    const newCert = fresh.getPeerCertificate();
    expect(fresh.authorized).toBe(true);
    expect(newCert.serialNumber).not.toBe(oldCert.serialNumber);
    expect(Date.parse(newCert.valid_to)).toBeGreaterThan(Date.now() + 824 * DAY);
    expectHealthy(await getHealth(fresh));
    expectHealthy(await getHealth(old));

    // the CA is the one clients trust already; the renewed files are on disk and reported
    expect(caFingerprint(dataDir)).toBe(caBefore);
    expect(gw.tls!.ca).toBe(ca);
    expect(new X509Certificate(gw.tls!.cert).serialNumber).toBe(newCert.serialNumber);
    expect(readFileSync(join(dataDir, 'tls', 'server.pem'), 'utf8')).toBe(gw.tls!.cert);
  });

  it('changes nothing when the certificate is not due', async () => {
    const { gw, ca, dataDir } = await gatewayWithAgingCertificate();
    const before = (await tlsConnect(gw, ca)).getPeerCertificate().serialNumber;
    const served = gw.tls;
    const files = readFileSync(join(dataDir, 'tls', 'server.pem'), 'utf8');

    expect(await gw.tlsRenewal!.check()).toBe(false);

    const after = await tlsConnect(gw, ca);
    expect(after.getPeerCertificate().serialNumber).toBe(before);
    expect(gw.tls).toBe(served);
    expect(readFileSync(join(dataDir, 'tls', 'server.pem'), 'utf8')).toBe(files);
    expectHealthy(await getHealth(after));
  });

  it('runs on its timer; a failed check is logged with its reason, the gateway keeps serving, and the next check renews', async () => {
    const logLines: string[] = [];
    const { gw, ca, dataDir } = await gatewayWithAgingCertificate({ tlsCheckIntervalMs: 20, logLines });
    const before = (await tlsConnect(gw, ca)).getPeerCertificate().serialNumber;

    // server.pem becomes unreadable (a directory in its place): every check fails
    const certPath = join(dataDir, 'tls', 'server.pem');
    rmSync(certPath);
    mkdirSync(certPath);
    await vi.waitFor(() => expect(logLines.join('')).toMatch(/"code":"EISDIR".*"msg":"TLS certificate check failed/), { timeout: 5000, interval: 20 });
    const during = await tlsConnect(gw, ca);
    expect(during.getPeerCertificate().serialNumber).toBe(before);
    expectHealthy(await getHealth(during));

    // repaired: the next check issues a certificate (same CA) and serves it
    rmSync(certPath, { recursive: true });
    await vi.waitFor(() => expect(logLines.join('')).toContain('TLS: server certificate renewed'), { timeout: 5000, interval: 20 });
    const after = await tlsConnect(gw, ca);
    expect(after.getPeerCertificate().serialNumber).not.toBe(before);
    expectHealthy(await getHealth(after));
  });
});
