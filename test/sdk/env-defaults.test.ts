/**
 * The SDK reads the settings `dev env` prints when an option is not given
 * (packages/sdk/src/settings.ts): the client, the buyer and the seller core. An option given wins;
 * `env: false` reads nothing; a setting still missing is refused at construction, naming the option,
 * its variable and how to get it. `env` is passed as a record here (process.env is the default: the
 * last test sets it for one construction and puts it back). No gateway: what is checked is what the
 * constructors resolved (the client's URL, the buyer's wallet, the seller's capability) and refused;
 * test/packaging/docs.test.ts runs the README's seller and buyer with no options against a dev gateway.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentpayClient } from '../../packages/sdk/src/client/index.js';
import { createBuyer } from '../../packages/sdk/src/buyer/index.js';
import { createSellerPayments } from '../../packages/sdk/src/seller/core.js';
import { AgentpayError } from '../../packages/sdk/src/errors.js';
import { generateKeyPair } from '../../packages/sdk/src/signing.js';

const dir = mkdtempSync(join(tmpdir(), 'agentpay-env-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CA_PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const caFile = join(dir, 'ca.pem');
writeFileSync(caFile, CA_PEM);

function refusal(fn: () => unknown): AgentpayError {
  try {
    fn();
  } catch (e) {
    if (e instanceof AgentpayError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('AgentpayClient', () => {
  it('takes gatewayUrl from AGENTPAY_GATEWAY_URL; an option given wins; env: false reads nothing', () => {
    expect(new AgentpayClient({ env: { AGENTPAY_GATEWAY_URL: 'https://gw.example/' } }).http.gatewayUrl).toBe('https://gw.example');
    expect(new AgentpayClient({ gatewayUrl: 'https://mine.example', env: { AGENTPAY_GATEWAY_URL: 'https://gw.example' } }).http.gatewayUrl).toBe('https://mine.example');
    const e = refusal(() => new AgentpayClient({ env: false }));
    expect(e.code).toBe('VALIDATION_FAILED');
    expect(e.details).toEqual({ field: 'gatewayUrl', variable: 'AGENTPAY_GATEWAY_URL' });
    expect(e.message).toMatch(/gatewayUrl is missing.*AGENTPAY_GATEWAY_URL.*dev env/);
  });

  it('reads AGENTPAY_CA as a path or as the PEM itself, and names the variable when the file cannot be read', () => {
    const caOf = (c: AgentpayClient) => (c.http as unknown as { ca: string | undefined }).ca;
    expect(caOf(new AgentpayClient({ env: { AGENTPAY_GATEWAY_URL: 'https://gw.example', AGENTPAY_CA: caFile } }))).toBe(CA_PEM);
    expect(caOf(new AgentpayClient({ env: { AGENTPAY_GATEWAY_URL: 'https://gw.example', AGENTPAY_CA: CA_PEM } }))).toBe(CA_PEM);
    expect(caOf(new AgentpayClient({ gatewayUrl: 'https://gw.example', ca: 'MINE', env: { AGENTPAY_CA: caFile } }))).toBe('MINE');
    const e = refusal(() => new AgentpayClient({ env: { AGENTPAY_GATEWAY_URL: 'https://gw.example', AGENTPAY_CA: join(dir, 'nope.pem') } }));
    expect(e.message).toMatch(/^AGENTPAY_CA=.*nope\.pem: cannot read the file \(ENOENT\)/);
  });
});

describe('createBuyer', () => {
  it('takes the gateway, wallet and key file from the environment (as dev env --role buyer prints them); options win', async () => {
    const keys = await generateKeyPair();
    const keyFile = join(dir, 'agent.pem');
    writeFileSync(keyFile, keys.privateKeyPem, { mode: 0o600 });
    const env = { AGENTPAY_GATEWAY_URL: 'https://gw.example', AGENTPAY_CA: caFile, AGENTPAY_WALLET_ID: 'wal_env', AGENTPAY_PRIVATE_KEY_FILE: keyFile };
    expect(createBuyer({ env }).walletId).toBe('wal_env');
    expect(createBuyer({ env, walletId: 'wal_mine' }).walletId).toBe('wal_mine');
    // a signer instead of a key: the key file is not needed (nor read)
    expect(createBuyer({ env: { ...env, AGENTPAY_PRIVATE_KEY_FILE: join(dir, 'nope.pem') }, signer: () => 'sig' }).walletId).toBe('wal_env');
  });

  it('names each missing setting, its variable and how to get it', async () => {
    const keys = await generateKeyPair();
    const noWallet = refusal(() => createBuyer({ env: { AGENTPAY_GATEWAY_URL: 'https://gw.example' }, privateKeyPem: keys.privateKeyPem }));
    expect(noWallet.details).toEqual({ field: 'walletId', variable: 'AGENTPAY_WALLET_ID' });
    expect(noWallet.message).toMatch(/^createBuyer: walletId is missing: pass the walletId option or set AGENTPAY_WALLET_ID \(eval "\$\(npx agentpay[ ]dev env --role buyer\)"/);
    const noKey = refusal(() => createBuyer({ env: { AGENTPAY_GATEWAY_URL: 'https://gw.example', AGENTPAY_WALLET_ID: 'wal_env' } }));
    expect(noKey.details).toEqual({ field: 'privateKeyPem', variable: 'AGENTPAY_PRIVATE_KEY_FILE' });
    const noGateway = refusal(() => createBuyer({ env: false, walletId: 'wal_1', privateKeyPem: keys.privateKeyPem }));
    expect(noGateway.details).toEqual({ field: 'gatewayUrl', variable: 'AGENTPAY_GATEWAY_URL' });
  });
});

describe('the seller core (every seller middleware)', () => {
  const env = { AGENTPAY_GATEWAY_URL: 'https://gw.example', AGENTPAY_API_KEY: 'ap_p_env', AGENTPAY_CA: caFile, AGENTPAY_CAPABILITY_ID: 'cap_env' };

  it('takes the gateway, key and capability from the environment (as dev env --role seller and publish give them); options win', () => {
    const seller = createSellerPayments({ env });
    expect(seller.client.http.gatewayUrl).toBe('https://gw.example');
    expect(seller.capabilityFor('POST', '/summarize')).toBe('cap_env');
    expect(createSellerPayments({ env, capabilityId: 'cap_mine' }).capabilityFor('POST', '/x')).toBe('cap_mine');
    // routes given: AGENTPAY_CAPABILITY_ID does not make the other routes paid
    expect(createSellerPayments({ env, routes: { 'GET /a': 'cap_a' } }).capabilityFor('GET', '/b')).toBeUndefined();
    // no routes of its own: every route says config.agentpay itself (docs/sdk.md, fastify), and the others are free
    expect(createSellerPayments({ env, routes: {} }).capabilityFor('GET', '/b')).toBeUndefined();
  });

  it('names a missing key and its variable', () => {
    const e = refusal(() => createSellerPayments({ env: { AGENTPAY_GATEWAY_URL: 'https://gw.example' } }));
    expect(e.details).toEqual({ field: 'apiKey', variable: 'AGENTPAY_API_KEY' });
    expect(e.message).toMatch(/^agentpay seller: apiKey is missing \(a provider key with payments:write\): pass the apiKey option or set AGENTPAY_API_KEY \(eval "\$\(npx agentpay[ ]dev env --role seller\)"/);
  });

  it('reads process.env by default', () => {
    const saved = { ...process.env };
    try {
      Object.assign(process.env, env);
      expect(createSellerPayments().capabilityFor('GET', '/x')).toBe('cap_env');
    } finally {
      for (const k of Object.keys(env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
    }
  });
});
