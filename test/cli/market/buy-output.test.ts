/**
 * `agentpay buy --output FILE` keeps the exact response bytes (binary-safe), so that
 * `agentpay receipts verify --response FILE` checks the receipt's responseHash against them
 * later: a real HTTPS seller, a funded agent wallet, the ledger checked afterwards, and a
 * changed byte refused.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuyResult } from '../../../src/cli/buy.js';
import { json } from '../helpers.js';
import { expectLedgerConsistent, fundedAgent, type AgentWallet } from '../../e2e/helpers.js';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { BINARY_BODY, cliFor, errorOf, publishedCliSeller, type Cli, type CliSeller } from './helpers.js';

let t: TestGateway;
let cli: Cli;
let seller: CliSeller;
let capabilityId: string;

beforeAll(async () => {
  t = await startTestGateway();
  cli = cliFor(t);
  ({ seller, capabilityId } = await publishedCliSeller(t, cli, { name: 'City forecast', description: 'Weather forecast for a city', priceMinor: '100' }));
});
afterAll(async () => {
  await seller?.close();
  cli?.close();
  await t?.close();
});

const balance = async (walletId: string) => (await t.workspace.wallets.balance(walletId)).balanceMinor;

async function agent(amountMinor: string): Promise<AgentWallet & { keyFile: string }> {
  const a = await fundedAgent(t, amountMinor);
  return { ...a, keyFile: cli.file(`${a.walletId}.pem`, a.privateKeyPem, 0o600) };
}

const buyArgs = (a: { walletId: string; keyFile: string }, target: string, ...extra: string[]) => ['buy', target, '--wallet', a.walletId, '--key-file', a.keyFile, ...extra];

/** `receipts verify PURCHASE --response FILE`: its exit code and verdict */
async function verify(purchaseFile: string, responseFile: string) {
  const r = await cli.run(['receipts', 'verify', purchaseFile, '--response', responseFile]);
  return { exitCode: r.exitCode, verdict: json<{ valid: boolean; checks: { responseHash: string; signature: string }; problems: Array<{ code: string }> }>(r) };
}

/** the file with one byte changed */
function flipped(path: string, at: number): string {
  const bytes = readFileSync(path);
  bytes[at] = bytes[at]! ^ 0x01;
  const out = `${path}.changed`;
  writeFileSync(out, bytes);
  return out;
}

describe('agentpay buy --output FILE', () => {
  it('writes the JSON body exactly as received; receipts verify --response accepts it and refuses a changed byte', async () => {
    const a = await agent('1000');
    const file = join(cli.dir, 'forecast.json');
    const r = await cli.run(buyArgs(a, capabilityId, '--data', '{"city":"Faro"}', '--output', file));
    expect(r.exitCode, r.stderr).toBe(0);
    const out = json<BuyResult>(r);
    // the seller's serialization, byte for byte: no pretty-printing, no added newline
    const expected = Buffer.from(JSON.stringify({ city: 'Faro', sunny: true }));
    expect(readFileSync(file)).toEqual(expected);
    expect(out.output).toEqual({ path: file, bytes: expected.length });
    expect(out.body).toEqual({ city: 'Faro', sunny: true });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(await balance(a.walletId)).toBe('900');
    await expectLedgerConsistent(t.workspace, a.walletId);

    const purchase = cli.file('purchase.json', r.stdout);
    const ok = await verify(purchase, file);
    expect(ok.exitCode).toBe(0);
    expect(ok.verdict).toMatchObject({ valid: true, checks: { signature: 'valid', responseHash: 'match' } });

    const bad = await verify(purchase, flipped(file, 3));
    expect(bad.exitCode).toBe(1);
    expect(bad.verdict.valid).toBe(false);
    expect(bad.verdict.checks.responseHash).toBe('mismatch');
    expect(bad.verdict.problems.map((p) => p.code)).toContain('RESPONSE_HASH_MISMATCH');
  });

  it('is binary-safe: a body that is not UTF-8 is written byte for byte and its hash checks', async () => {
    const a = await agent('1000');
    const file = join(cli.dir, 'bytes.bin');
    // by URL: no API key needed, the agent key pays
    const r = await cli.run(buyArgs(a, `${seller.url}/bytes`, '--output', file), { key: '' });
    expect(r.exitCode, r.stderr).toBe(0);
    const out = json<BuyResult>(r);
    expect(out.status).toBe(200);
    expect(new Uint8Array(readFileSync(file))).toEqual(BINARY_BODY);
    expect(out.output).toEqual({ path: file, bytes: BINARY_BODY.byteLength });
    expect(await balance(a.walletId)).toBe('900');
    await expectLedgerConsistent(t.workspace, a.walletId);

    const purchase = cli.file('bytes-purchase.json', r.stdout);
    expect((await verify(purchase, file)).verdict).toMatchObject({ valid: true, checks: { responseHash: 'match' } });
    // the body as text (what --json prints in "body") is not the bytes: only the file verifies
    const asText = cli.file('bytes.txt', String(out.body));
    expect((await verify(purchase, asText)).verdict.checks.responseHash).toBe('mismatch');
    for (const at of [0, 2, BINARY_BODY.byteLength - 1]) {
      const bad = await verify(purchase, flipped(file, at));
      expect(bad.exitCode).toBe(1);
      expect(bad.verdict.checks.responseHash).toBe('mismatch');
    }
  });

  it('refuses an --output it could not write before paying: USAGE naming --output, no money moved', async () => {
    const a = await agent('1000');
    const handled = seller.handled.forecast ?? 0;
    const missing = await cli.run(buyArgs(a, capabilityId, '--data', '{"city":"Faro"}', '--output', join(cli.dir, 'no', 'such', 'dir', 'out.json')));
    expect(missing.exitCode).toBe(2);
    expect(errorOf(missing)).toMatchObject({ code: 'USAGE', details: { flag: '--output' } });
    expect(errorOf(missing).message).toContain('does not exist');
    const directory = await cli.run(buyArgs(a, capabilityId, '--data', '{"city":"Faro"}', '--output', cli.dir));
    expect(directory.exitCode).toBe(2);
    expect(errorOf(directory)).toMatchObject({ code: 'USAGE', message: `--output: ${cli.dir} is a directory`, details: { flag: '--output' } });
    expect(seller.handled.forecast ?? 0).toBe(handled);
    expect(await balance(a.walletId)).toBe('1000');
    expect(await t.workspace.wallets.ledger(a.walletId)).toHaveLength(1); // the funding only
  });

  it('a seller error is written too (what was received, what its failed receipt covers), and the call is refunded as before', async () => {
    const a = await agent('1000');
    const file = join(cli.dir, 'broken.json');
    const r = await cli.run(buyArgs(a, `${seller.url}/broken`, '--output', file), { key: '' });
    expect(r.exitCode).toBe(1);
    const out = json<BuyResult>(r);
    expect(out).toMatchObject({ status: 503, ok: false, receipt: { status: 'failed' } });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ error: { code: 'UPSTREAM_DOWN', message: 'weather service down' } });
    expect(await balance(a.walletId)).toBe('1000');
    await expectLedgerConsistent(t.workspace, a.walletId);
    // the failed call's receipt covers the error the seller sent: the file checks against it
    const purchase = cli.file('broken-purchase.json', r.stdout);
    expect((await verify(purchase, file)).verdict.checks.responseHash).toBe('match');
  });
});
