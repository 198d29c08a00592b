/**
 * `agentpay payouts create` when no answer says what happened. The run makes its own
 * idempotency key and sends it; if the reply is lost (or the gateway fails with a 5xx that
 * is not a refusal), the error says the payout may have been made and names that key, and
 * a retry with it answers the same payout: the money goes out once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caPath } from '../../../src/cli/local-gateway.js';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { ledgerRows } from '../../payments/helpers.js';
import { cli, gatewayProxy, json, removeTempDirs, tempDir, type CliResult } from '../helpers.js';

let t: TestGateway;
let payee: Awaited<ReturnType<TestGateway['newProvider']>>;
let env: Record<string, string>;
const configDir = tempDir();

beforeAll(async () => {
  t = await startTestGateway();
  payee = await t.newProvider({ name: 'CLI outcome payee' });
  await payee.client.wallets.fund(payee.walletId, '10000');
  await payee.client.payouts.setDestination(payee.id, { destination: 'ext_outcome_bank' });
  env = { AGENTPAY_CA: caPath(t.dataDir), AGENTPAY_API_KEY: payee.apiKey };
});
afterAll(async () => {
  await t?.close();
  removeTempDirs();
});

const errorOf = (r: CliResult) => json<{ error: { code: string; message: string; details: Record<string, unknown> } }>(r).error;
const tryOf = (r: CliResult) => r.stderr.split('\n').find((l) => l.startsWith('Try: ')) ?? '';
const payoutEntries = () => ledgerRows(t, { walletId: payee.walletId }).map((e) => [e.type, e.amount_minor.toString()]);

/**
 * A proxy to the gateway. POST /v1/payouts is forwarded and its reply cut (the payout is made,
 * the CLI never hears of it), or answered 500 without reaching the gateway; `keys` collects the
 * idempotency keys it was sent with.
 */
async function proxy(onPayout: 'forward-and-drop' | 'answer-500') {
  const keys: string[] = [];
  const p = await gatewayProxy(t, (req) => {
    if (req.method !== 'POST' || req.url !== '/v1/payouts') return 'forward';
    keys.push(String(req.headers['idempotency-key']));
    return onPayout === 'answer-500'
      ? { status: 500, body: { error: { code: 'INTERNAL', message: 'internal error', details: {} }, errorId: 'err_test' } }
      : 'drop-reply';
  });
  return { ...p, keys };
}

describe('agentpay payouts create with an unknown outcome', () => {
  it('names the key it sent when the reply is lost, and a retry with that key answers the same payout: paid out once', async () => {
    const p = await proxy('forward-and-drop');
    let lost: CliResult;
    try {
      lost = await cli(['payouts', 'create', '--amount', '4000', '--rail', 'ach', '--gateway-url', p.url, '--json'], { configDir, env });
    } finally {
      await p.close();
    }
    expect(lost.exitCode).toBe(3);
    const [key] = p.keys;
    expect(key).toMatch(/^[\x21-\x7e]{8,}$/);
    const error = errorOf(lost);
    expect(error).toMatchObject({ code: 'GATEWAY_UNREACHABLE', details: { idempotencyKey: key } });
    expect(error.message).toContain(`the payout may have been made: retry with --idempotency-key ${key}, which never pays twice, or check agentpay payouts list`);
    // the gateway made it
    expect(payoutEntries()).toEqual([['fund', '10000'], ['payout', '-4000']]);

    const retry = await cli(['payouts', 'create', '--amount', '4000', '--rail', 'ach', '--idempotency-key', key!, '--gateway-url', t.baseUrl, '--json'], { configDir, env });
    expect(retry.exitCode, retry.stderr).toBe(0);
    const { payouts } = await payee.client.payouts.list();
    expect(payouts).toHaveLength(1);
    expect(json(retry).payout).toMatchObject({ id: payouts[0]!.id, amountMinor: '4000', status: 'submitted' });
    expect(payoutEntries()).toEqual([['fund', '10000'], ['payout', '-4000']]);
  });

  it('says the same for a 500, and the human output gives the command that retries safely', async () => {
    const p = await proxy('answer-500');
    let failed: CliResult;
    try {
      failed = await cli(['payouts', 'create', '--amount', '1000', '--rail', 'ach', '--wallet', payee.walletId, '--gateway-url', p.url], { configDir, env });
    } finally {
      await p.close();
    }
    expect(failed.exitCode).toBe(1);
    const [key] = p.keys;
    expect(failed.stderr).toContain('error INTERNAL: internal error (errorId err_test); the payout may have been made');
    expect(tryOf(failed)).toBe(`Try: retry with the same key, which never pays twice: agentpay payouts create --amount 1000 --rail ach --wallet ${payee.walletId} --idempotency-key ${key}; or check whether it was made: agentpay payouts list`);
    expect(payoutEntries()).toEqual([['fund', '10000'], ['payout', '-4000']]);
  });

  it('each run sends a new key, and a refusal keeps its own message', async () => {
    const p = await proxy('answer-500');
    try {
      await cli(['payouts', 'create', '--amount', '1', '--rail', 'ach', '--wallet', payee.walletId, '--gateway-url', p.url, '--json'], { configDir, env });
      await cli(['payouts', 'create', '--amount', '1', '--rail', 'ach', '--wallet', payee.walletId, '--gateway-url', p.url, '--json'], { configDir, env });
    } finally {
      await p.close();
    }
    expect(new Set(p.keys).size).toBe(2);

    const refused = await cli(['payouts', 'create', '--amount', '999999', '--rail', 'ach', '--gateway-url', t.baseUrl, '--json'], { configDir, env });
    expect(refused.exitCode).toBe(1);
    expect(errorOf(refused).code).toBe('INSUFFICIENT_FUNDS');
    expect(errorOf(refused).message).not.toContain('may have been made');
    expect(payoutEntries()).toEqual([['fund', '10000'], ['payout', '-4000']]);
  });
});
