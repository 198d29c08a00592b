/**
 * What createBuyer refuses when it is created, before any call: a malformed agent key (with a
 * coded AgentpayError naming privateKeyPem and the form to pass) and a malformed ceiling; and
 * the default ceiling it applies when none is given. The same checks guard the MCP buyer (it
 * takes a buyer) and the axios interceptor installed from options.
 */
import { generateKeyPairSync } from 'node:crypto';
import axios from 'axios';
import { describe, expect, it } from 'vitest';
import { createBuyer, DEFAULT_MAX_PRICE_MINOR } from '../../packages/sdk/src/buyer/index.js';
import { withAgentpay } from '../../packages/sdk/src/buyer/axios.js';
import { AgentpayError } from '../../packages/sdk/src/errors.js';
import { generateKeyPair } from '../../packages/sdk/src/signing.js';
import type { PriceChallenge } from '../../packages/sdk/src/protocol.js';

const base = { gatewayUrl: 'https://127.0.0.1:1', walletId: 'wal_test' };

function refused(fn: () => unknown): AgentpayError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(AgentpayError);
    return e as AgentpayError;
  }
  return expect.unreachable('it should have been refused');
}

const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const ed = generateKeyPairSync('ed25519');

describe('createBuyer: a malformed private key is refused at creation', () => {
  it.each([
    ['text that is no PEM', 'my-agent-key', /privateKeyPem is not a PEM private key/],
    ['a PEM whose body is not valid base64', '-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----\n', /privateKeyPem is not base64/],
    ['a PEM whose body is damaged', '-----BEGIN PRIVATE KEY-----\nnot a key!\n-----END PRIVATE KEY-----\n', /privateKeyPem is not a PEM private key/],
    ['an RSA private key', rsa, /privateKeyPem is not an ed25519 PKCS#8 private key/],
    ['the public key', ed.publicKey.export({ type: 'spki', format: 'pem' }).toString(), /privateKeyPem is a public key/],
    ['an encrypted key', ed.privateKey.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'x' }).toString(), /privateKeyPem is encrypted/],
    ['a number', 42 as unknown as string, /privateKeyPem is a number/],
  ])('refuses %s: VALIDATION_FAILED naming privateKeyPem and the form to pass', (_what, privateKeyPem, message) => {
    const e = refused(() => createBuyer({ ...base, privateKeyPem }));
    expect(e).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'privateKeyPem' } });
    expect(e.message).toMatch(message);
    expect(e.message).toContain('-----BEGIN PRIVATE KEY-----');
    // the axios interceptor installed from options refuses it alike
    expect(refused(() => withAgentpay(axios.create(), { ...base, privateKeyPem }))).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'privateKeyPem' } });
  });

  it('takes a PKCS#8 ed25519 key from node:crypto or generateKeyPair, and a signer without a key', async () => {
    expect(createBuyer({ ...base, privateKeyPem: ed.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() }).walletId).toBe('wal_test');
    expect(createBuyer({ ...base, privateKeyPem: (await generateKeyPair()).privateKeyPem }).walletId).toBe('wal_test');
    expect(createBuyer({ ...base, signer: () => 'sig' }).walletId).toBe('wal_test');
    expect(refused(() => createBuyer({ ...base }))).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'privateKeyPem' } });
  });

  it('refuses a ceiling that is not integer minor units', () => {
    expect(refused(() => createBuyer({ ...base, signer: () => 's', maxPriceMinor: '1.50' }))).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'maxPriceMinor' } });
  });
});

describe('the default ceiling', () => {
  const challenge = (amountMinor: string): PriceChallenge => ({
    capabilityId: 'cap_1', providerId: 'prv_1', amountMinor, currency: 'USD', nonce: 'n', expiresAt: new Date(Date.now() + 60_000).toISOString(),
    payTo: 'wal_seller', signature: 's', signingKeyId: 'k',
  });

  it(`is ${DEFAULT_MAX_PRICE_MINOR} minor units: signed at it, refused above it before signing (PRICE_ABOVE_CLIENT_LIMIT), raised by maxPriceMinor`, async () => {
    expect(DEFAULT_MAX_PRICE_MINOR).toBe('100');
    let signed = 0;
    const signer = () => {
      signed++;
      return 'sig';
    };
    const { payer } = createBuyer({ ...base, signer });
    expect((await payer.signProof(challenge('100'))).challenge.amountMinor).toBe('100');
    await expect(payer.signProof(challenge('101'))).rejects.toMatchObject({ code: 'PRICE_ABOVE_CLIENT_LIMIT', details: { amountMinor: '101', maxPriceMinor: '100', defaultLimit: true } });
    expect(signed).toBe(1);
    await expect(payer.signProof(challenge('101'), { maxPriceMinor: '500' })).resolves.toBeDefined();
    const raised = createBuyer({ ...base, signer, maxPriceMinor: '1000' }).payer;
    await expect(raised.signProof(challenge('1000'))).resolves.toBeDefined();
    await expect(raised.signProof(challenge('1001'))).rejects.toMatchObject({ code: 'PRICE_ABOVE_CLIENT_LIMIT', details: { defaultLimit: false } });
  });
});
