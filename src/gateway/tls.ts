/**
 * A local certificate authority and a server certificate for localhost/127.0.0.1,
 * made on first start and reused after. ECDSA P-256 through WebCrypto keeps start-up
 * fast; @peculiar/x509 writes the certificates.
 */
import { webcrypto, X509Certificate } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';

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

async function exportKeyPem(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key as webcrypto.CryptoKey));
  return `-----BEGIN PRIVATE KEY-----\n${der.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n?$/, '\n')}-----END PRIVATE KEY-----\n`;
}

function writeSecret(path: string, content: string): void {
  writeFileSync(path, content, { mode: 0o600 });
  chmodSync(path, 0o600);
}

function stillValid(certPem: string, now: number): boolean {
  try {
    const c = new X509Certificate(certPem);
    return Date.parse(c.validTo) > now + DAY;
  } catch {
    return false;
  }
}

export async function ensureTls(dataDir: string, now: number = Date.now()): Promise<TlsMaterial> {
  const dir = join(dataDir, 'tls');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const caCertPath = join(dir, 'ca.pem');
  const caKeyPath = join(dir, 'ca-key.pem');
  const certPath = join(dir, 'server.pem');
  const keyPath = join(dir, 'server-key.pem');

  if ([caCertPath, caKeyPath, certPath, keyPath].every((p) => existsSync(p))) {
    const cert = readFileSync(certPath, 'utf8');
    if (stillValid(cert, now)) {
      return { caCertPath, certPath, keyPath, cert, key: readFileSync(keyPath, 'utf8'), ca: readFileSync(caCertPath, 'utf8') };
    }
  }

  const notBefore = new Date(now - DAY);
  const caKeys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as unknown as CryptoKeyPair;
  const caCert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: Buffer.from(webcrypto.getRandomValues(new Uint8Array(16))).toString('hex').replace(/^[89a-f]/, '1'),
    name: 'CN=agentpay local CA, O=agentpay development',
    notBefore,
    notAfter: new Date(now + 3650 * DAY),
    keys: caKeys,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });

  const leafKeys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as unknown as CryptoKeyPair;
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: Buffer.from(webcrypto.getRandomValues(new Uint8Array(16))).toString('hex').replace(/^[89a-f]/, '1'),
    subject: 'CN=localhost',
    issuer: caCert.subject,
    notBefore,
    notAfter: new Date(now + 825 * DAY),
    signingKey: caKeys.privateKey,
    publicKey: leafKeys.publicKey,
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
      await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });

  const ca = caCert.toString('pem') + '\n';
  const cert = leaf.toString('pem') + '\n';
  const key = await exportKeyPem(leafKeys.privateKey);
  writeSecret(caKeyPath, await exportKeyPem(caKeys.privateKey));
  writeSecret(keyPath, key);
  writeFileSync(caCertPath, ca);
  writeFileSync(certPath, cert);
  return { caCertPath, certPath, keyPath, cert, key, ca };
}
