/**
 * `agentpay payouts resolve ID --outcome paid|failed --reason R` (operator key), the built
 * binary against a real HTTPS gateway: both outcomes with the ledger checked afterwards, and
 * the refusals with their exit codes and next steps; nothing moves when it is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entries, expectConserved, payee, railGateway, type TestGateway } from '../../rails/helpers.js';
import { cli, gatewayEnv, json, removeTempDirs, tempDir, type CliResult } from '../helpers.js';

let t: TestGateway & { clock: unknown };
const configDir = tempDir();
let base: Record<string, string>;

beforeAll(async () => {
  t = await railGateway();
  base = gatewayEnv(t);
});
afterAll(async () => {
  await t?.close();
  removeTempDirs();
});

const run = (apiKey: string, ...args: string[]) => cli(args, { configDir, env: { ...base, AGENTPAY_API_KEY: apiKey } });
const asOperator = (...args: string[]) => run(t.creds.operatorKey, ...args);
const errorOf = (r: CliResult) => json<{ error: { code: string; message: string; details: Record<string, unknown> } }>(r).error;
const tryOf = (r: CliResult) => r.stderr.split('\n').find((l) => l.startsWith('Try: ')) ?? '';

/** A provider with 10000 and an ach payout of 4000 the rail took and has not settled. */
async function stuck() {
  const s = await payee(t, '10000');
  const payout = await s.client.payouts.create({ walletId: s.walletId, amountMinor: '4000', rail: 'ach' });
  return { s, payout };
}

describe('agentpay payouts resolve', () => {
  it('--outcome paid confirms the payout with the reason and moves no money', async () => {
    const { s, payout } = await stuck();
    const r = await asOperator('payouts', 'resolve', payout.id, '--outcome', 'paid', '--reason', 'bank confirmed trace 0421', '--json');
    expect(r.exitCode, r.stderr).toBe(0);
    expect(json(r).payout).toMatchObject({ id: payout.id, status: 'confirmed', reason: 'resolved by the operator: bank confirmed trace 0421' });
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-4000']]);
    expectConserved(t);
  });

  it('--outcome failed re-credits the provider once; a second resolution is refused (exit 1) and changes nothing', async () => {
    const { s, payout } = await stuck();
    const r = await asOperator('payouts', 'resolve', payout.id, '--outcome', 'failed', '--reason', 'bank has no record', '--json');
    expect(r.exitCode, r.stderr).toBe(0);
    expect(json(r).payout).toMatchObject({ status: 'failed', reason: 'resolved by the operator: bank has no record' });
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-4000'], ['payout_return', '4000']]);

    const again = await asOperator('payouts', 'resolve', payout.id, '--outcome', 'failed', '--reason', 'again');
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toContain(`error CONFLICT: payout ${payout.id} is already failed; only a submitted payout is resolved, once`);
    expect(tryOf(again)).toBe('Try: nothing to resolve: the payout has settled as the message says, and a resolution is final');
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-4000'], ['payout_return', '4000']]);
    // the rail's record corrected, so that the treasury agrees with the re-credit
    await t.gw.services.rails.registry.sandbox!.settlePayout(payout.externalRef!, 'returned', 'never sent');
    expectConserved(t);
  });

  it('refuses failed when the rail says it paid (RAIL_DISAGREES, exit 1) and says to resolve it as paid', async () => {
    const { s, payout } = await stuck();
    await t.gw.services.rails.registry.sandbox!.settlePayout(payout.externalRef!, 'confirmed');
    const r = await asOperator('payouts', 'resolve', payout.id, '--outcome', 'failed', '--reason', 'bank said no');
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`error RAIL_DISAGREES: the rail reports payout ${payout.id} paid`);
    expect(tryOf(r)).toBe(`Try: the rail sent the money: agentpay payouts resolve ${payout.id} --outcome paid --reason "..." --as operator; or have the rail correct its record first`);
    const j = await asOperator('payouts', 'resolve', payout.id, '--outcome', 'failed', '--reason', 'bank said no', '--json');
    expect(errorOf(j)).toMatchObject({ code: 'RAIL_DISAGREES', details: { payoutId: payout.id, railState: 'confirmed' } });
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-4000']]);
  });

  it('refuses a provider key (FORBIDDEN, exit 1) pointing at the operator key, and needs --reason without a terminal (USAGE, exit 2)', async () => {
    const { s, payout } = await stuck();
    const r = await run(s.apiKey, 'payouts', 'resolve', payout.id, '--outcome', 'failed', '--reason', 'mine');
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('error FORBIDDEN: this API key lacks the scope operator');
    expect(tryOf(r)).toContain('--as operator');

    const missing = await asOperator('payouts', 'resolve', payout.id, '--outcome', 'paid', '--json');
    expect(missing.exitCode).toBe(2);
    expect(errorOf(missing)).toMatchObject({ code: 'USAGE', details: { flag: '--reason' } });
    const badOutcome = await asOperator('payouts', 'resolve', payout.id, '--outcome', 'maybe', '--reason', 'x');
    expect(badOutcome.exitCode).toBe(2);
    expect(await s.client.payouts.get(payout.id)).toMatchObject({ status: 'submitted', reason: null });
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-4000']]);
  });

  it('--help names the outcomes, the reason and the operator key', async () => {
    const r = await cli(['payouts', 'resolve', '--help'], { configDir });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('Close out a submitted payout its rail never resolved (operator key)');
    expect(r.stdout).toMatch(/--outcome=<option>\s+paid or failed/);
    expect(r.stdout).toContain('--reason=<value>');
    expect(r.stdout).toContain('--json');
  });
});
