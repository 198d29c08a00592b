/**
 * `agentpay payouts list` with the operator key, the built binary against a real HTTPS gateway
 * on a manual clock whose bank rail never settles: every provider's payouts, `--stuck` (submitted
 * more than 24 hours ago by the gateway's clock), `--status` and `--submitted-before`, then one
 * stuck payout resolved and gone from the list, the ledger checked. A provider key still lists its
 * own; a workspace key and bad flags are refused with their exit codes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payoutTableEveryProvider } from '../../../src/cli/payouts.js';
import type { PayoutRail } from '../../../src/domain/rails/adapters.js';
import type { Payout } from '../../../packages/sdk/src/client/index.js';
import { HOUR, entries, expectConserved, payee, railGateway, runJobs, type TestGateway } from '../../rails/helpers.js';
import { cli, gatewayEnv, json, removeTempDirs, tempDir, type CliResult } from '../helpers.js';

type Payee = Awaited<ReturnType<typeof payee>>;
let t: TestGateway & { clock: { now(): number; advance(ms: number): void } };
let realStatus: PayoutRail['status'];
const configDir = tempDir();
let base: Record<string, string>;
let A: Payee, B: Payee;
let a1: Payout, b1: Payout, a2: Payout;

const bank = () => t.gw.services.rails.registry.find('sandbox-bank')!.payouts!;

/** A and B each submit an ach payout at 10:00; 25 hours later A submits another. The bank never settles any. */
beforeAll(async () => {
  t = await railGateway();
  base = gatewayEnv(t);
  realStatus = bank().status;
  bank().status = async () => undefined;
  A = await payee(t, '10000');
  B = await payee(t, '10000');
  a1 = await A.client.payouts.create({ walletId: A.walletId, amountMinor: '1000', rail: 'ach' });
  b1 = await B.client.payouts.create({ walletId: B.walletId, amountMinor: '2000', rail: 'ach' });
  t.clock.advance(25 * HOUR);
  a2 = await A.client.payouts.create({ walletId: A.walletId, amountMinor: '300', rail: 'ach' });
  await runJobs(t);
});
afterAll(async () => {
  if (t) bank().status = realStatus;
  await t?.close();
  removeTempDirs();
});

const run = (apiKey: string, ...args: string[]) => cli(args, { configDir, env: { ...base, AGENTPAY_API_KEY: apiKey } });
const asOperator = (...args: string[]) => run(t.creds.operatorKey, ...args);
const payoutsOf = (r: CliResult) => {
  expect(r.exitCode, r.stderr).toBe(0);
  return json<{ payouts: Payout[]; nextCursor?: string }>(r).payouts;
};
const ids = (ps: readonly Payout[]) => ps.map((p) => p.id);
const errorOf = (r: CliResult) => json<{ error: { code: string; message: string; details: Record<string, unknown> } }>(r).error;
const tryOf = (r: CliResult) => r.stderr.split('\n').find((l) => l.startsWith('Try: ')) ?? '';

describe('agentpay payouts list with the operator key', () => {
  it('lists every provider\'s payouts, newest first, each naming its provider, in the --json shape of a provider\'s list', async () => {
    const r = await asOperator('payouts', 'list', '--json');
    const payouts = payoutsOf(r);
    expect(ids(payouts)).toEqual([a2.id, b1.id, a1.id]);
    expect(payouts.map((p) => p.providerId)).toEqual([A.id, B.id, A.id]);
    expect(Object.keys(json(r))).toEqual(['payouts']);
    // each exactly as its provider's own list shows it
    const own = payoutsOf(await run(A.apiKey, 'payouts', 'list', '--json'));
    expect(own).toEqual([payouts[0], payouts[2]]);
  });

  it('--stuck lists the payouts still submitted after more than 24 hours by the gateway\'s clock, across providers; the table shows provider, id, amount, status and submitted time', async () => {
    const stuck = payoutsOf(await asOperator('payouts', 'list', '--stuck', '--json'));
    expect(ids(stuck)).toEqual([b1.id, a1.id]);
    expect(stuck.every((p) => p.status === 'submitted')).toBe(true);

    const table = payoutTableEveryProvider(stuck).split('\n');
    expect(table[0]!.split(/\s{2,}/)).toEqual(['PROVIDER', 'ID', 'AMOUNT', 'STATUS', 'SUBMITTED', 'RAIL']);
    expect(table[1]!.split(/\s{2,}/)).toEqual([B.id, b1.id, '20.00 USD', 'submitted', b1.createdAt, 'ach']);
    expect(table[2]!.split(/\s{2,}/)).toEqual([A.id, a1.id, '10.00 USD', 'submitted', a1.createdAt, 'ach']);
  });

  it('--status and --submitted-before narrow the list; --limit and --after page across providers', async () => {
    const dayAgo = new Date(t.clock.now() - 24 * HOUR).toISOString();
    expect(ids(payoutsOf(await asOperator('payouts', 'list', '--status', 'submitted', '--submitted-before', dayAgo, '--json')))).toEqual([b1.id, a1.id]);
    expect(ids(payoutsOf(await asOperator('payouts', 'list', '--status', 'confirmed', '--json')))).toEqual([]);
    expect(ids(payoutsOf(await asOperator('payouts', 'list', '--submitted-before', '2026-03-03T10:00:00Z', '--json')))).toEqual([]);

    const first = json(await asOperator('payouts', 'list', '--stuck', '--limit', '1', '--json'));
    expect(first).toEqual({ payouts: [expect.objectContaining({ id: b1.id, providerId: B.id })], nextCursor: b1.id });
    const second = payoutsOf(await asOperator('payouts', 'list', '--stuck', '--limit', '1', '--after', first.nextCursor, '--json'));
    expect(ids(second)).toEqual([a1.id]);
  });

  it('lists a stuck payout, then resolves it: it leaves the stuck list, the provider is re-credited once', async () => {
    const [oldest] = payoutsOf(await asOperator('payouts', 'list', '--stuck', '--json')).slice(-1);
    expect(oldest).toMatchObject({ id: a1.id, providerId: A.id, status: 'submitted' });
    const resolved = await asOperator('payouts', 'resolve', oldest!.id, '--outcome', 'failed', '--reason', 'bank has no record of it, ticket 4411', '--json');
    expect(resolved.exitCode, resolved.stderr).toBe(0);
    expect(json(resolved).payout).toMatchObject({ id: a1.id, status: 'failed' });

    expect(ids(payoutsOf(await asOperator('payouts', 'list', '--stuck', '--json')))).toEqual([b1.id]);
    expect(entries(t, A.walletId)).toEqual([['fund', '10000'], ['payout', '-1000'], ['payout', '-300'], ['payout_return', '1000']]);
    expect(entries(t, B.walletId)).toEqual([['fund', '10000'], ['payout', '-2000']]);
    expectConserved(t);
  });
});

describe('agentpay payouts list with other keys and bad flags', () => {
  it('a provider key still lists its own payouts only, --stuck included', async () => {
    expect(ids(payoutsOf(await run(B.apiKey, 'payouts', 'list', '--json')))).toEqual([b1.id]);
    expect(ids(payoutsOf(await run(A.apiKey, 'payouts', 'list', '--stuck', '--json')))).toEqual([]);
  });

  it('a workspace key is a usage error (exit 2) naming the provider and the operator keys', async () => {
    const r = await run(t.creds.workspace.apiKey, 'payouts', 'list', '--stuck');
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("error USAGE: this key belongs to a workspace; payouts are a provider's");
    expect(tryOf(r)).toContain('--as provider');
    expect(tryOf(r)).toContain('--as operator');
  });

  it('refuses --stuck with --status (exit 2), an unknown --status (exit 2), and a --submitted-before that is no ISO time, naming the flag (exit 1)', async () => {
    const both = await asOperator('payouts', 'list', '--stuck', '--status', 'submitted');
    expect(both.exitCode).toBe(2);
    expect(both.stderr).toMatch(/--status|--stuck/);
    const status = await asOperator('payouts', 'list', '--status', 'stuck');
    expect(status.exitCode).toBe(2);
    const time = await asOperator('payouts', 'list', '--submitted-before', 'yesterday', '--json');
    expect(time.exitCode).toBe(1);
    expect(errorOf(time)).toMatchObject({
      code: 'VALIDATION_FAILED', message: '--submitted-before: must be an ISO 8601 time that exists, like 2026-11-20T00:00:00Z',
      details: { field: 'submittedBefore', flag: '--submitted-before' },
    });
  });

  it('payouts resolve of an unknown payout points at the list of submitted payouts', async () => {
    const r = await asOperator('payouts', 'resolve', 'pay_unknown', '--outcome', 'paid', '--reason', 'x');
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('error NOT_FOUND: payout pay_unknown not found');
    expect(tryOf(r)).toBe('Try: find the payouts still submitted, with their ids: agentpay payouts list --status submitted --as operator');
  });

  it('--help names the filters and the operator key', async () => {
    const r = await cli(['payouts', 'list', '--help'], { configDir });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('--stuck');
    expect(r.stdout).toMatch(/--status=<option>/);
    expect(r.stdout).toContain('--submitted-before=<value>');
    expect(r.stdout).toContain('payouts list --stuck --as operator');
  });
});
