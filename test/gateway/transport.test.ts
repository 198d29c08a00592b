/**
 * HTTPS with a local CA made on first start and reused after; plain HTTP refused with
 * 403 INSECURE_TRANSPORT; behind a TLS-terminating proxy, `trustProxy` honours
 * x-forwarded-proto and nothing else does, and the health routes alone answer a plain check.
 */
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../src/gateway/server.js';
import { backendOptions, startTestGateway, type TestGateway } from '../helpers/gateway.js';

const TLS_FILES = ['ca.pem', 'ca-key.pem', 'server.pem', 'server-key.pem'];
const tempDirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'agentpay-transport-'));
  tempDirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
});

/** Opens a TLS connection and reports whether the certificate verified, and which it was. */
function handshake(port: number, opts: { host: string; servername?: string; ca?: string }): Promise<{ ok: boolean; error?: string; certDer?: Buffer }> {
  return new Promise((resolve) => {
    const socket = tls.connect({ port, host: opts.host, ...(opts.servername ? { servername: opts.servername } : {}), ...(opts.ca ? { ca: opts.ca } : {}) });
    socket.once('secureConnect', () => {
      const certDer = socket.getPeerCertificate().raw;
      socket.end();
      resolve({ ok: socket.authorized, certDer });
    });
    socket.once('error', (e: NodeJS.ErrnoException) => {
      socket.destroy();
      resolve({ ok: false, error: e.code ?? e.message });
    });
  });
}

async function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: { error?: { code: string; message: string } } & Record<string, unknown> }> {
  const res = await fetch(url, { headers });
  return { status: res.status, body: (await res.json()) as never };
}

describe('the local certificate authority', () => {
  const dataDir = tempDir();
  let t: TestGateway;
  let first: Record<string, string>;
  beforeAll(async () => {
    expect(existsSync(join(dataDir, 'tls'))).toBe(false);
    t = await startTestGateway({ dataDir });
    first = Object.fromEntries(TLS_FILES.map((f) => [f, readFileSync(join(dataDir, 'tls', f), 'utf8')]));
  });
  afterAll(async () => {
    await t?.close();
  });

  it('is generated into DATA_DIR/tls on first start: a CA and a certificate for localhost and 127.0.0.1 signed by it', () => {
    const ca = new X509Certificate(first['ca.pem']!);
    const leaf = new X509Certificate(first['server.pem']!);
    expect(ca.ca).toBe(true);
    expect(leaf.ca).toBe(false);
    expect(leaf.checkIssued(ca)).toBe(true);
    expect(leaf.verify(ca.publicKey)).toBe(true);
    expect(leaf.subjectAltName).toContain('DNS:localhost');
    expect(leaf.subjectAltName).toContain('IP Address:127.0.0.1');
    expect(t.ca).toBe(first['ca.pem']);
    expect(t.gw.tls?.caCertPath).toBe(join(dataDir, 'tls', 'ca.pem'));
  });

  it('keeps its private keys in 0600 files in a 0700 directory', () => {
    expect(statSync(join(dataDir, 'tls')).mode & 0o777).toBe(0o700);
    for (const f of ['ca-key.pem', 'server-key.pem']) {
      expect(statSync(join(dataDir, 'tls', f)).mode & 0o777, f).toBe(0o600);
      expect(first[f]).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    }
  });

  it('verifies a TLS connection to 127.0.0.1 and to localhost when the CA is trusted', async () => {
    const port = Number(new URL(t.baseUrl).port);
    const byIp = await handshake(port, { host: '127.0.0.1', ca: t.ca });
    expect(byIp).toMatchObject({ ok: true });
    expect(byIp.certDer!.equals(new X509Certificate(first['server.pem']!).raw)).toBe(true);
    expect(await handshake(port, { host: '127.0.0.1', servername: 'localhost', ca: t.ca })).toMatchObject({ ok: true });
  });

  it('fails without the CA, and for a name the certificate does not carry', async () => {
    const port = Number(new URL(t.baseUrl).port);
    const untrusted = await handshake(port, { host: '127.0.0.1' });
    expect(untrusted.ok).toBe(false);
    expect(untrusted.error).toMatch(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT/);
    const wrongName = await handshake(port, { host: '127.0.0.1', servername: 'example.com', ca: t.ca });
    expect(wrongName).toMatchObject({ ok: false, error: 'ERR_TLS_CERT_ALTNAME_INVALID' });
    await expect(fetch(`${t.baseUrl}/health`)).rejects.toThrow();
  });

  it('is trusted through NODE_EXTRA_CA_CERTS by a plain fetch in another process', async () => {
    const script = `const r = await fetch(${JSON.stringify(`${t.baseUrl}/health`)}); console.log(JSON.stringify({ status: r.status, body: await r.json() }));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...process.env, NODE_EXTRA_CA_CERTS: join(dataDir, 'tls', 'ca.pem') },
    });
    expect(JSON.parse(stdout)).toMatchObject({ status: 200, body: { status: 'ok' } });
  });

  it('is reused, byte for byte, when the gateway restarts on the same data directory', async () => {
    await t.close();
    t = await startTestGateway({ dataDir });
    for (const f of TLS_FILES) expect(readFileSync(join(dataDir, 'tls', f), 'utf8'), f).toBe(first[f]);
    const served = await handshake(Number(new URL(t.baseUrl).port), { host: '127.0.0.1', ca: first['ca.pem']! });
    expect(served.ok).toBe(true);
    expect(served.certDer!.equals(new X509Certificate(first['server.pem']!).raw)).toBe(true);
    expect((await t.client().platform.health()).status).toBe('ok');
  });
});

describe('plain HTTP', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers 403 INSECURE_TRANSPORT in the error envelope, public routes included', async () => {
    for (const path of ['/health', '/v1/platform/public-key', '/v1/wallets']) {
      const res = await get(`${t.httpUrl}${path}`);
      expect(res.status, path).toBe(403);
      expect(res.body.error, path).toMatchObject({ code: 'INSECURE_TRANSPORT', message: expect.stringContaining('https://') });
    }
  });

  it('refuses before authentication (a valid key still gets 403) and ignores x-forwarded-proto', async () => {
    const withKey = await get(`${t.httpUrl}/v1/wallets`, { 'x-api-key': t.creds.workspace.apiKey });
    expect(withKey).toMatchObject({ status: 403, body: { error: { code: 'INSECURE_TRANSPORT' } } });
    const spoofed = await get(`${t.httpUrl}/health`, { 'x-forwarded-proto': 'https' });
    expect(spoofed).toMatchObject({ status: 403, body: { error: { code: 'INSECURE_TRANSPORT' } } });
  });
});

describe('behind a TLS-terminating proxy (plain listener)', () => {
  const gateways: RunningGateway[] = [];
  const start = async (trustProxy: boolean) => {
    const dataDir = tempDir();
    const gw = await startGateway({ ...(await backendOptions(dataDir)), dataDir, tls: false, httpPort: null, port: 0, config: { trustProxy } });
    gateways.push(gw);
    return gw;
  };
  afterAll(async () => {
    for (const gw of gateways) await gw.close();
  });

  it('with trustProxy, serves a request the proxy marks x-forwarded-proto: https, and refuses one it does not', async () => {
    const gw = await start(true);
    expect(gw.tls).toBeNull();
    expect(gw.httpUrl).toBeNull();
    expect(gw.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(existsSync(join(gw.dataDir, 'tls'))).toBe(false);

    const served = await get(`${gw.baseUrl}/health`, { 'x-forwarded-proto': 'https' });
    expect(served.status).toBe(200);
    expect(served.body).toMatchObject({ status: 'ok', instance: gw.services.signingKeys.currentKeyId });

    const KEY = '/v1/platform/public-key';
    expect(await get(`${gw.baseUrl}${KEY}`)).toMatchObject({ status: 403, body: { error: { code: 'INSECURE_TRANSPORT' } } });
    expect(await get(`${gw.baseUrl}${KEY}`, { 'x-forwarded-proto': 'http' })).toMatchObject({ status: 403, body: { error: { code: 'INSECURE_TRANSPORT' } } });
    // several proxies: the last hop (the one in front of the gateway) decides
    expect((await get(`${gw.baseUrl}${KEY}`, { 'x-forwarded-proto': 'http, https' })).status).toBe(200);
    expect((await get(`${gw.baseUrl}${KEY}`, { 'x-forwarded-proto': 'https, http' })).status).toBe(403);
  });

  it('answers the health routes alone over plain HTTP without x-forwarded-proto: a balancer checks the instance directly', async () => {
    const gw = await start(true);
    for (const path of ['/health', '/health/live', '/health/ready']) {
      const res = await get(`${gw.baseUrl}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.body.instanceId, path).toBe(gw.services.instanceId);
    }
    // nothing else: a public route, a route with a key, an unknown path and a path under /health
    for (const path of ['/v1/platform/public-key', '/v1/wallets', '/openapi.json', '/nope', '/health/other']) {
      expect(await get(`${gw.baseUrl}${path}`), path).toMatchObject({ status: 403, body: { error: { code: 'INSECURE_TRANSPORT' } } });
    }
  });

  it('with trustProxy and TLS, the refuse-only plain listener still refuses a forged x-forwarded-proto: https, and health too', async () => {
    const dataDir = tempDir();
    const gw = await startGateway({ ...(await backendOptions(dataDir)), dataDir, port: 0, httpPort: 0, config: { trustProxy: true } });
    gateways.push(gw);
    expect(await get(`${gw.httpUrl}/health`, { 'x-forwarded-proto': 'https' })).toMatchObject({ status: 403, body: { error: { code: 'INSECURE_TRANSPORT' } } });
    expect(await get(`${gw.httpUrl}/health/ready`)).toMatchObject({ status: 403, body: { error: { code: 'INSECURE_TRANSPORT' } } });
  });

  it('without trustProxy, ignores x-forwarded-proto and refuses with 403 INSECURE_TRANSPORT', async () => {
    const gw = await start(false);
    expect(await get(`${gw.baseUrl}/v1/platform/public-key`, { 'x-forwarded-proto': 'https' })).toMatchObject({ status: 403, body: { error: { code: 'INSECURE_TRANSPORT' } } });
    expect(await get(`${gw.baseUrl}/v1/platform/public-key`)).toMatchObject({ status: 403, body: { error: { code: 'INSECURE_TRANSPORT' } } });
  });
});
