/**
 * `agentpay receipts verify` with the built binary against a real gateway: a real
 * purchase (fastify seller with the seller middleware, the buyer SDK) gives a receipt and
 * the exact response bytes, which are then checked from a file, from stdin and by id, and
 * tampered with: a flipped byte, another key id, another response.
 */
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caPath } from '../../../src/cli/local-gateway.js';
import { gatewayCacheKey, verdictText, type Verdict } from '../../../src/cli/receipts-verify.js';
import { createBuyer } from '../../../packages/sdk/src/buyer/index.js';
import type { Receipt } from '../../../packages/sdk/src/types.js';
import { cli, json, removeTempDirs, tempDir, type CliResult } from '../helpers.js';
import { fetchTrusting, fundedAgent, publish, startFastifySeller, type RunningSeller } from '../../e2e/helpers.js';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';

let t: TestGateway;
let seller: RunningSeller;
let receipt: Receipt;
let body: Uint8Array;
let dir: string;
/** the gateway's URL and a copy of its CA, kept for the offline check after it stops */
let baseUrl: string;
let ca: string;
let stopped = false;

beforeAll(async () => {
  t = await startTestGateway();
  baseUrl = t.baseUrl;
  const price100 = await publish(t, '100');
  const price1 = await publish(t, '1');
  seller = await startFastifySeller(t, { price100, price1 });
  const agent = await fundedAgent(t, '1000');
  const buyer = createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: agent.walletId, privateKeyPem: agent.privateKeyPem, fetch: fetchTrusting(t.ca) });
  const res = await buyer.fetch(`${seller.url}/forecast?city=Faro`);
  body = new Uint8Array(await res.arrayBuffer());
  receipt = res.receipt!;
  dir = tempDir('agentpay-cli-receipts-');
  ca = join(dir, 'ca.pem');
  copyFileSync(caPath(t.dataDir), ca);
});
afterAll(async () => {
  if (!stopped) {
    await seller?.close();
    await t?.close();
  }
  removeTempDirs();
});

const file = (name: string, content: string | Uint8Array) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};

/** `agentpay receipts verify ARGS` against the test gateway, config and cache in `dir` */
function verify(args: string[], opts: { input?: string; key?: string; env?: Record<string, string> } = {}): Promise<CliResult> {
  return cli(['receipts', 'verify', ...args], {
    configDir: dir,
    env: { AGENTPAY_GATEWAY_URL: baseUrl, AGENTPAY_CA: ca, ...(opts.key ? { AGENTPAY_API_KEY: opts.key } : {}), ...opts.env },
    ...(opts.input !== undefined ? { input: opts.input } : {}),
  });
}

const verdictOf = (r: CliResult) => json<Verdict>(r);
const receiptText = () => JSON.stringify(receipt, null, 2);

/** the receipt file with one character of `field`'s value changed */
function flipped(field: keyof Receipt): string {
  const text = receiptText();
  const value = String(receipt[field]);
  const at = text.indexOf(JSON.stringify(value)) + 1 + Math.floor(value.length / 2); // a character inside the value
  const c = text[at]!;
  return text.slice(0, at) + (c === 'A' ? 'B' : 'A') + text.slice(at + 1);
}

describe('agentpay receipts verify: a good receipt', () => {
  it('accepts it from a file with the response it covers: exit 0, the key fetched once and cached by gateway URL and key id', async () => {
    const path = file('receipt.json', receiptText());
    const bodyPath = file('body.json', body);

    const first = await verify([path, '--response', bodyPath, '--json']);
    expect(first.exitCode).toBe(0);
    expect(verdictOf(first)).toMatchObject({
      valid: true,
      source: path,
      receipt: { id: receipt.id },
      checks: { format: 'ok', signature: 'valid', responseHash: 'match' },
      key: { keyId: receipt.signingKeyId, from: 'gateway', baseUrl },
      problems: [],
    });
    const cache = JSON.parse(readFileSync(join(dir, 'receipt-keys.json'), 'utf8'));
    expect(cache[gatewayCacheKey(baseUrl)][receipt.signingKeyId].publicKeyPem).toContain('BEGIN PUBLIC KEY');

    const second = await verify([path, '--json']);
    expect(second.exitCode).toBe(0);
    expect(verdictOf(second)).toMatchObject({ valid: true, checks: { signature: 'valid', responseHash: 'not_checked' }, key: { from: 'cache' } });
  });

  it('accepts it from stdin (-), as receipt JSON, as `receipts show --json` output, and as the x-service-receipt header value', async () => {
    const plain = await verify(['-'], { input: JSON.stringify(receipt) });
    expect(plain.exitCode).toBe(0);
    expect(verdictOf(plain)).toMatchObject({ valid: true, source: 'stdin' });

    const wrapped = await verify(['-'], { input: JSON.stringify({ receipt, signatureValid: true }) });
    expect(verdictOf(wrapped)).toMatchObject({ valid: true, receipt: { id: receipt.id } });

    const header = Buffer.from(JSON.stringify(receipt)).toString('base64url');
    const fromHeader = await verify(['-'], { input: header });
    expect(verdictOf(fromHeader)).toMatchObject({ valid: true, receipt: { id: receipt.id } });
  });

  it('fetches it by id with the workspace key and accepts it', async () => {
    const r = await verify([receipt.id, '--response', file('body-by-id.json', body)], { key: t.creds.workspace.apiKey });
    expect(r.exitCode).toBe(0);
    expect(verdictOf(r)).toMatchObject({ valid: true, source: receipt.id, checks: { signature: 'valid', responseHash: 'match' } });
  });
});

describe('agentpay receipts verify: a bad receipt exits 1 and says what is wrong', () => {
  it('rejects a flipped byte in a signed field: SIGNATURE_MISMATCH', async () => {
    const r = await verify([file('flipped.json', flipped('transactionId'))]);
    expect(r.exitCode).toBe(1);
    const v = verdictOf(r);
    expect(v).toMatchObject({ valid: false, checks: { format: 'ok', signature: 'mismatch' } });
    expect(v.problems).toEqual([expect.objectContaining({ code: 'SIGNATURE_MISMATCH', field: 'signature', message: expect.stringContaining('the signature does not match') })]);
  });

  it('rejects a flipped byte in the signature itself', async () => {
    const r = await verify([file('flipped-sig.json', flipped('signature'))]);
    expect(r.exitCode).toBe(1);
    expect(verdictOf(r).problems.map((p) => p.code)).toEqual(['SIGNATURE_MISMATCH']);
  });

  it('rejects an unknown key id: UNKNOWN_KEY_ID, naming signingKeyId', async () => {
    const r = await verify([file('wrong-key.json', JSON.stringify({ ...receipt, signingKeyId: 'sk_doesnotexist' }))]);
    expect(r.exitCode).toBe(1);
    const v = verdictOf(r);
    expect(v.checks.signature).toBe('unknown_key');
    expect(v.problems).toEqual([expect.objectContaining({ code: 'UNKNOWN_KEY_ID', field: 'signingKeyId', message: expect.stringContaining('sk_doesnotexist is not a receipt key') })]);
  });

  it("rejects another real key's id (after a rotation): the signature does not match that key", async () => {
    const { signingKeyId } = await t.operator.platform.rotateKeys();
    expect(signingKeyId).not.toBe(receipt.signingKeyId);
    const r = await verify([file('other-key.json', JSON.stringify({ ...receipt, signingKeyId }))]);
    expect(r.exitCode).toBe(1);
    expect(verdictOf(r)).toMatchObject({ checks: { signature: 'mismatch' }, key: { keyId: signingKeyId } });
    // and the original receipt still verifies: old keys stay retrievable after rotation
    expect((await verify([file('receipt-after-rotation.json', receiptText())])).exitCode).toBe(0);
  });

  it('rejects a wrong response file: RESPONSE_HASH_MISMATCH, while the signature itself is valid', async () => {
    const wrong = Buffer.from(body);
    wrong[wrong.length - 2] = wrong[wrong.length - 2]! ^ 1;
    const r = await verify([file('receipt-2.json', receiptText()), '--response', file('wrong-body.json', wrong)]);
    expect(r.exitCode).toBe(1);
    const v = verdictOf(r);
    expect(v.checks).toEqual({ format: 'ok', signature: 'valid', responseHash: 'mismatch' });
    expect(v.problems).toEqual([expect.objectContaining({ code: 'RESPONSE_HASH_MISMATCH', message: expect.stringContaining(receipt.responseHash!) })]);
    // one byte more (a trailing newline an editor adds) is a mismatch too
    const extra = await verify([file('receipt-3.json', receiptText()), '--response', file('body-nl.json', Buffer.concat([body, Buffer.from('\n')]))]);
    expect(extra.exitCode).toBe(1);
  });

  it('names the malformed field: an amount sent as a number, a status out of the enum', async () => {
    const r = await verify([file('malformed.json', JSON.stringify({ ...receipt, amount: { amountMinor: 100, currency: 'USD' }, status: 'ok' }))]);
    expect(r.exitCode).toBe(1);
    const v = verdictOf(r);
    expect(v.checks).toEqual({ format: 'malformed', signature: 'not_checked', responseHash: 'not_checked' });
    expect(v.problems.map((p) => [p.code, p.field])).toEqual([['RECEIPT_MALFORMED', 'amount.amountMinor'], ['RECEIPT_MALFORMED', 'status']]);
    const notJson = await verify([file('not-json.json', '{"id": "rcp_1",')]);
    expect(notJson.exitCode).toBe(1);
    expect(verdictOf(notJson).problems[0]).toMatchObject({ code: 'RECEIPT_MALFORMED', field: '(receipt)', message: expect.stringContaining('not valid JSON') });
  });

  it('reads like a verdict for a person: NOT VALID, then each problem with its code', () => {
    const text = verdictText({
      valid: false, source: 'r.json', receipt,
      checks: { format: 'ok', signature: 'mismatch', responseHash: 'not_checked' },
      key: { keyId: receipt.signingKeyId, from: 'cache', baseUrl },
      problems: [{ code: 'SIGNATURE_MISMATCH', field: 'signature', message: 'the signature does not match: ...' }],
    });
    expect(text).toMatch(new RegExp(`^receipt ${receipt.id}: NOT VALID`));
    expect(text).toMatch(/signature: +DOES NOT MATCH \(receipt key sk_\w+, cached\)/);
    expect(text).toContain('SIGNATURE_MISMATCH: the signature does not match');
  });
});

describe('agentpay receipts verify: usage and reachability', () => {
  it('with no gateway configured is NO_GATEWAY (exit 3) whose next step is the offline check with --public-key', async () => {
    const path = file('nogateway.json', receiptText());
    const r = await cli(['receipts', 'verify', path], { configDir: tempDir() });
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toContain('error NO_GATEWAY:');
    expect(r.stderr).toMatch(/^Try: check it offline with the receipt key: agentpay receipts verify FILE --public-key KEY\.pem/m);
  });

  it('a path that is neither a file nor a receipt id is a usage error (exit 2)', async () => {
    const r = await verify(['no-such-file.json', '--json']);
    expect(r.exitCode).toBe(2);
    expect(json(r).error).toMatchObject({ code: 'USAGE', message: expect.stringContaining('no such file, and not a receipt id') });
  });

  it('checks offline once the key is cached: the gateway stopped, the receipt still verifies; an uncached key id is exit 3', async () => {
    const path = file('offline.json', receiptText());
    stopped = true;
    await seller.close();
    await t.close();
    expect(existsSync(join(dir, 'receipt-keys.json'))).toBe(true);

    const r = await verify([path]);
    expect(r.exitCode).toBe(0);
    expect(verdictOf(r)).toMatchObject({ valid: true, key: { from: 'cache' } });

    const uncached = await verify([file('uncached.json', JSON.stringify({ ...receipt, signingKeyId: 'sk_neverseen' })), '--json']);
    expect(uncached.exitCode).toBe(3);
    expect(json(uncached).error.code).toBe('GATEWAY_UNREACHABLE');
  });
});
