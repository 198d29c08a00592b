/**
 * A local certificate authority and a server certificate for localhost/127.0.0.1,
 * made on first start and reused after. ECDSA P-256 through WebCrypto keeps start-up
 * fast; @peculiar/x509 writes the certificates.
 *
 * Clients trust the CA (`ca.pem`), so it is kept as long as it can be: an expiring
 * server certificate is renewed with the existing CA, and a new CA (which every
 * client must trust again) is made only when the CA itself is missing, unreadable,
 * does not match its key, or is about to expire.
 *
 * A running gateway checks again every hour (`TlsRenewal`) and swaps a renewed
 * certificate into its HTTPS server, so it never serves an expired one.
 */
import { createPublicKey, webcrypto, X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import type { Server as HttpsServer } from 'node:https';
import { join } from 'node:path';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import type { FastifyBaseLogger } from 'fastify';
import { ensurePrivateDir, readTextFile, writeFileAtomic } from '../core/files.js';
import { Periodic } from '../domain/platform/periodic.js';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

export interface TlsMaterial {
  caCertPath: string;
  certPath: string;
  keyPath: string;
  cert: string;
  key: string;
  ca: string;
}

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY = 24 * 60 * 60 * 1000;
const CA_LIFETIME = 3650 * DAY;
const LEAF_LIFETIME = 825 * DAY;
/** A server certificate closer than this to its end is renewed. */
const LEAF_RENEW_BEFORE = DAY;
/** A CA closer than this to its end is replaced; a renewed server certificate would not outlive it by much. */
const CA_RENEW_BEFORE = 30 * DAY;

/** The CA as read back from disk: its PEM, its certificate and its private key for signing. */
interface Ca {
  pem: string;
  cert: x509.X509Certificate;
  /** imported only when a certificate is to be signed: most starts and checks sign nothing */
  privateKey(): Promise<CryptoKey>;
}

async function exportKeyPem(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key as webcrypto.CryptoKey));
  return `-----BEGIN PRIVATE KEY-----\n${der.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n?$/, '\n')}-----END PRIVATE KEY-----\n`;
}

function serialNumber(): string {
  return Buffer.from(webcrypto.getRandomValues(new Uint8Array(16))).toString('hex').replace(/^[89a-f]/, '1');
}

/** The public key of a private key PEM, as DER, to compare with a certificate's. */
function publicDerOf(privateKeyPem: string): Buffer {
  return createPublicKey(privateKeyPem).export({ type: 'spki', format: 'der' });
}

/** The existing CA, or undefined when it is missing, unreadable, not its key's, or expiring. */
async function loadCa(caCertPath: string, caKeyPath: string, now: number): Promise<Ca | undefined> {
  if (!existsSync(caCertPath) || !existsSync(caKeyPath)) return undefined;
  try {
    const pem = readFileSync(caCertPath, 'utf8');
    const keyPem = readFileSync(caKeyPath, 'utf8');
    const c = new X509Certificate(pem);
    if (!c.ca || Date.parse(c.validTo) <= now + CA_RENEW_BEFORE) return undefined;
    if (!publicDerOf(keyPem).equals(c.publicKey.export({ type: 'spki', format: 'der' }))) return undefined;
    const der = Buffer.from(keyPem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
    const privateKey = async () => (await webcrypto.subtle.importKey('pkcs8', der, ALG, false, ['sign'])) as unknown as CryptoKey;
    return { pem, cert: new x509.X509Certificate(pem), privateKey };
  } catch {
    return undefined;
  }
}

/** True when the server certificate and key on disk are usable: valid a while longer, signed by `ca`, and a pair. */
function leafUsable(certPem: string, keyPem: string, ca: Ca, now: number): boolean {
  try {
    const c = new X509Certificate(certPem);
    const caCert = new X509Certificate(ca.pem);
    return (
      Date.parse(c.validTo) > now + LEAF_RENEW_BEFORE &&
      c.checkIssued(caCert) &&
      c.verify(caCert.publicKey) &&
      publicDerOf(keyPem).equals(c.publicKey.export({ type: 'spki', format: 'der' }))
    );
  } catch {
    return false;
  }
}

async function createCa(now: number): Promise<Ca & { keyPem: string }> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as unknown as CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: 'CN=agentpay local CA, O=agentpay development',
    notBefore: new Date(now - DAY),
    notAfter: new Date(now + CA_LIFETIME),
    keys,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { pem: cert.toString('pem') + '\n', cert, privateKey: async () => keys.privateKey, keyPem: await exportKeyPem(keys.privateKey) };
}

/** A server certificate for localhost, 127.0.0.1 and ::1 signed by `ca`, never outliving it. */
async function issueLeaf(ca: Ca, now: number): Promise<{ cert: string; key: string }> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as unknown as CryptoKeyPair;
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: 'CN=localhost',
    issuer: ca.cert.subject,
    notBefore: new Date(now - DAY),
    notAfter: new Date(Math.min(now + LEAF_LIFETIME, ca.cert.notAfter.getTime())),
    signingKey: await ca.privateKey(),
    publicKey: keys.publicKey,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth], false),
      new x509.SubjectAlternativeNameExtension([
        { type: 'dns', value: 'localhost' },
        { type: 'ip', value: '127.0.0.1' },
        { type: 'ip', value: '::1' },
      ]),
      await x509.AuthorityKeyIdentifierExtension.create(ca.cert.publicKey),
    ],
  });
  return { cert: leaf.toString('pem') + '\n', key: await exportKeyPem(keys.privateKey) };
}

/**
 * The TLS files of `dataDir/tls`, made or renewed as needed. `now` (ms) is the time the
 * certificates are judged and issued at; tests move it to exercise renewal.
 */
export async function ensureTls(dataDir: string, now: number = Date.now()): Promise<TlsMaterial> {
  const dir = join(dataDir, 'tls');
  ensurePrivateDir(dir);
  const caCertPath = join(dir, 'ca.pem');
  const caKeyPath = join(dir, 'ca-key.pem');
  const certPath = join(dir, 'server.pem');
  const keyPath = join(dir, 'server-key.pem');

  let ca = await loadCa(caCertPath, caKeyPath, now);
  if (ca && existsSync(certPath) && existsSync(keyPath)) {
    const cert = readTextFile(certPath);
    const key = readTextFile(keyPath);
    if (leafUsable(cert, key, ca, now)) return { caCertPath, certPath, keyPath, cert, key, ca: ca.pem };
  }

  if (!ca) {
    const made = await createCa(now);
    // each file replaced atomically, so an instance reading the directory (several can share it)
    // never sees half a file; a key and its certificate from two renewals are caught by leafUsable.
    // Certificates are public, but like everything in the data directory they are 0600 (the default).
    writeFileAtomic(caKeyPath, made.keyPem);
    writeFileAtomic(caCertPath, made.pem);
    ca = made;
  }
  const { cert, key } = await issueLeaf(ca, now);
  writeFileAtomic(keyPath, key);
  writeFileAtomic(certPath, cert);
  return { caCertPath, certPath, keyPath, cert, key, ca: ca.pem };
}

/** The options an HTTPS server is created with, and renewed with: one place, so both stay the same. */
export function serverTlsOptions(m: Pick<TlsMaterial, 'cert' | 'key'>): { cert: string; key: string } {
  return { cert: m.cert, key: m.key };
}

/**
 * Keeps a running HTTPS server's certificate fresh: each check runs `ensureTls` (the same
 * renewal as at start, same thresholds) and, when that produced other files, swaps them
 * into the server. Connections already open keep their certificate; new handshakes get
 * the new one. Time is the wall clock, not the gateway's injected `Clock`: clients judge
 * a certificate by their own clock, and tests move the gateway's clock far from it.
 */
export class TlsRenewal {
  private readonly periodic = new Periodic(() => this.check());

  constructor(
    private readonly dataDir: string,
    private readonly server: HttpsServer,
    /** the material the server was started with */
    private served: TlsMaterial,
    private readonly log: Pick<FastifyBaseLogger, 'info' | 'warn'>,
  ) {}

  /** The material the server hands to new connections. */
  get current(): TlsMaterial {
    return this.served;
  }

  /** Renews what needs renewing at `now` (ms) and serves it; true when the certificate changed. */
  async check(now: number = Date.now()): Promise<boolean> {
    const next = await ensureTls(this.dataDir, now);
    if (next.cert === this.served.cert && next.key === this.served.key) return false;
    this.server.setSecureContext(serverTlsOptions(next));
    const previous = this.served;
    this.served = next;
    const notAfter = new X509Certificate(next.cert).validTo;
    if (next.ca !== previous.ca) {
      this.log.warn({ caCertPath: next.caCertPath, notAfter }, 'TLS: the local CA was replaced (it was missing, broken or expiring); clients must trust the new ca.pem');
    } else {
      this.log.info({ certPath: next.certPath, notAfter }, 'TLS: server certificate renewed');
    }
    return true;
  }

  /** Checks every `intervalMs`; a failed check is reported to `onError` and tried again next time. */
  start(intervalMs: number, onError: (e: unknown) => void): void {
    this.periodic.start(intervalMs, onError);
  }

  /** Stops the timer and waits for a check in progress. */
  stop(): Promise<void> {
    return this.periodic.stop();
  }
}
