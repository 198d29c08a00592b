/**
 * `agentpay events list` and `agentpay events tail` (the built binary) against a real HTTPS
 * gateway, with payout destination changes as the events; the following loop itself
 * (src/cli/events.ts) in process, against the same gateway.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentpayClient, RailEvent } from '../../../packages/sdk/src/client/index.js';
import { EVENT_TYPES } from '../../../packages/sdk/src/contract/webhooks.js';
import { eventLine, eventsSince, eventTable, followEvents } from '../../../src/cli/events.js';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { until } from '../../helpers/wait.js';
import { cli, gatewayEnv, gatewayProxy, json, removeTempDirs, spawnCli, tempDir, type ProxyRoute } from '../helpers.js';

let t: TestGateway;
let seller: { id: string; apiKey: string; client: AgentpayClient };
let env: Record<string, string>;
const configDir = tempDir();
let n = 0;

/** One payout_destination.changed event for the seller (its first destination raised none). */
async function change(): Promise<string> {
  const destination = `ext_evt_${++n}`;
  await seller.client.payouts.setDestination(seller.id, { destination });
  return destination;
}

const run = (...args: string[]) => cli(args, { configDir, env });
// every tail started in the background has a --timeout, so one a failed test leaves behind ends by itself
const lines = (stdout: string): RailEvent[] => stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as RailEvent);

beforeAll(async () => {
  t = await startTestGateway();
  seller = await t.newProvider({ name: 'Events Seller' });
  await seller.client.payouts.setDestination(seller.id, { destination: 'ext_evt_first' });
  env = gatewayEnv(t, seller.apiKey);
});
afterAll(async () => {
  await t.close();
  removeTempDirs();
});

describe('agentpay events list', () => {
  it('prints the key\'s alerts newest first, filters by --type and pages with --limit and --after', async () => {
    const first = await change();
    const second = await change();
    const r = await run('events', 'list', '--json');
    expect(r.exitCode, r.stderr).toBe(0);
    const { events } = json<{ events: RailEvent[] }>(r);
    expect(events.slice(0, 2).map((e) => [e.type, e.data.destination, e.data.previous])).toEqual([
      ['payout_destination.changed', second, first],
      ['payout_destination.changed', first, 'ext_evt_first'],
    ]);
    expect(json(await run('events', 'list', '--type', 'payout.returned', '--json'))).toEqual({ events: [] });

    const page1 = json(await run('events', 'list', '--limit', '1', '--json'));
    expect(page1.events.map((e: RailEvent) => e.id)).toEqual([events[0]!.id]);
    expect(page1.nextCursor).toBe(events[0]!.id);
    const page2 = json(await run('events', 'list', '--limit', '1', '--after', page1.nextCursor, '--json'));
    expect(page2.events.map((e: RailEvent) => e.id)).toEqual([events[1]!.id]);

    // another tenant sees none of them
    const ws = await t.newWorkspace('Events Onlooker');
    expect(json(await cli(['events', 'list', '--json'], { configDir, env: gatewayEnv(t, ws.apiKey) }))).toEqual({ events: [] });
  });

  it('refuses an unknown --type as a usage error naming the flag (exit 2)', async () => {
    const r = await run('events', 'list', '--type', 'payout.lost', '--json');
    expect(r.exitCode).toBe(2);
    expect(json(r).error).toMatchObject({ code: 'USAGE', details: { flag: '--type' } });
    // every type of the contract, in its order (the session events among them)
    expect(json(r).error.message).toBe(`--type: must be one of ${EVENT_TYPES.join(', ')} (got "payout.lost")`);
    expect(json(r).error.message).toContain('session.opened');
  });
});

describe('agentpay events tail', () => {
  it('prints each event written after it started, oldest first, one JSON line each, and exits 0 after --count', async () => {
    await change(); // before the start: not printed
    const tail = spawnCli(['events', 'tail', '--json', '--interval', '1', '--count', '2', '--timeout', '60'], { configDir, env });
    await tail.waitFor('stderr', 'Following all events');
    const a = await change();
    const b = await change();
    const r = await tail.done;
    expect(r.exitCode, r.stderr).toBe(0);
    expect(lines(r.stdout).map((e) => e.data.destination)).toEqual([a, b]);
  });

  it('with --since prints the events after it first; --type leaves out every other type', async () => {
    const since = (json(await run('events', 'list', '--limit', '1', '--json')).events[0] as RailEvent).id;
    const a = await change();
    const b = await change();
    const r = await run('events', 'tail', '--since', since, '--count', '2', '--timeout', '30', '--json');
    expect(r.exitCode, r.stderr).toBe(0);
    expect(lines(r.stdout).map((e) => e.data.destination)).toEqual([a, b]);
    expect(r.stderr).toContain(`after ${since}`);

    const none = await run('events', 'tail', '--since', since, '--type', 'payout.returned', '--count', '1', '--timeout', '1', '--json');
    expect(none.exitCode).toBe(1);
    expect(json(none).error).toMatchObject({ code: 'TIMEOUT', details: { count: 1, arrived: 0, type: 'payout.returned', timeoutSeconds: 1 } });
    expect(json(none).error.message).toBe('0 of the 1 payout.returned event waited for arrived within 1 s');
  });

  it('refuses a --since that is not one of the key\'s events with INVALID_CURSOR (exit 1), naming it', async () => {
    const r = await run('events', 'tail', '--since', 'evt_nope', '--json');
    expect(r.exitCode).toBe(1);
    expect(json(r).error.code).toBe('INVALID_CURSOR');
    expect(json(r).error.message).toContain('evt_nope');
  });

  it('stops after --timeout with exit 0 when no --count was asked for, and on Ctrl-C with exit 0', async () => {
    const timed = await run('events', 'tail', '--timeout', '1', '--json');
    expect(timed.exitCode, timed.stderr).toBe(0);
    expect(timed.stdout).toBe('');

    const tail = spawnCli(['events', 'tail', '--json', '--timeout', '120'], { configDir, env });
    await tail.waitFor('stderr', 'Following');
    const a = await change();
    await tail.waitFor('stdout', a);
    const r = await tail.stop('SIGINT');
    expect(r.exitCode, r.stderr).toBe(0);
    expect(lines(r.stdout).map((e) => e.data.destination)).toEqual([a]);
  });

  it('says once that the gateway does not answer and keeps following; says when it answers again; ends on a bad key (exit 4)', async () => {
    let route: ProxyRoute = 'forward';
    let requests = 0;
    const proxy = await gatewayProxy(t, () => (requests++, route));
    try {
      const viaProxy = { ...env, AGENTPAY_GATEWAY_URL: proxy.url };
      const tail = spawnCli(['events', 'tail', '--json', '--interval', '1', '--timeout', '120'], { configDir, env: viaProxy });
      await tail.waitFor('stderr', 'Following');
      route = { status: 503, body: { error: { code: 'SERVICE_UNAVAILABLE', message: 'the gateway is closing', details: {} } } };
      await tail.waitFor('stderr', 'did not answer (SERVICE_UNAVAILABLE)');
      const a = await change(); // written while the tail cannot see it
      const failed = requests;
      await until(() => requests >= failed + 2, 'two more polls that fail'); // no second note for them
      expect(tail.stderr().match(/did not answer/g)).toHaveLength(1);
      route = 'forward';
      await tail.waitFor('stdout', a);
      expect(tail.stderr()).toContain('the gateway answers again; following');

      route = { status: 401, body: { error: { code: 'UNAUTHORIZED', message: 'the API key was revoked', details: {} } } };
      const r = await tail.done;
      expect(r.exitCode).toBe(4);
      expect(JSON.parse(r.stdout.trim().split('\n').at(-1)!).error.code).toBe('UNAUTHORIZED');
      expect(lines(r.stdout.trim().split('\n').slice(0, -1).join('\n')).map((e) => e.data.destination)).toEqual([a]);
    } finally {
      await proxy.close();
    }
  });
});

describe('following, in process', () => {
  it('eventsSince reads page after page until the event it was given, oldest first', async () => {
    const since = (await seller.client.rail.events({ limit: 1 })).events[0]!.id;
    const made = [await change(), await change(), await change(), await change(), await change()];
    const fresh = await eventsSince(seller.client, since, 2);
    expect(fresh.map((e) => e.data.destination)).toEqual(made);
    expect(await eventsSince(seller.client, fresh.at(-1)!.id, 2)).toEqual([]);
    // from nothing: every event there is
    const all = await eventsSince(seller.client, null, 3);
    expect(all.map((e) => e.id)).toEqual((await seller.client.rail.events({ limit: 200 })).events.map((e) => e.id).reverse());
  });

  it('followEvents hands on events as they come and ends at the deadline, moving its own clock', async () => {
    const seen: string[] = [];
    let now = 0;
    let polls = 0;
    const end = await followEvents(seller.client, {
      intervalMs: 1000,
      timeoutMs: 5000,
      now: () => now,
      wait: async (ms) => {
        polls++;
        if (polls === 2) seen.push(`made ${await change()}`);
        now += ms;
      },
      onEvent: (e) => seen.push(String(e.data.destination)),
      onNote: (m) => seen.push(`note ${m}`),
    });
    expect(end).toEqual({ end: 'timeout', handed: 1 });
    expect(seen).toEqual([`made ext_evt_${n}`, `ext_evt_${n}`]);
    expect(polls).toBe(5);
  });

  it('shows an event as one line and a page as a table, the data as key=value pairs, amounts in their currency where the event names it', () => {
    const held: RailEvent = { id: 'evt_2', type: 'approval.requested', createdAt: '2026-11-27T10:00:00.000Z', data: { approvalId: 'apr_1', amountMinor: '600', currency: 'USD' } };
    expect(eventLine(held)).toBe('2026-11-27T10:00:00.000Z  approval.requested  evt_2  approvalId=apr_1 amount=6.00 USD currency=USD');
    const deposit: RailEvent = { id: 'evt_3', type: 'deposit.held', createdAt: '2026-11-27T10:00:00.000Z', data: { amountMinor: '2500000', asset: 'USDC' } };
    expect(eventLine(deposit)).toBe('2026-11-27T10:00:00.000Z  deposit.held  evt_3  amount=2.500000 USDC asset=USDC');
    const credited: RailEvent = { id: 'evt_4', type: 'deposit.credited', createdAt: '2026-11-27T10:00:00.000Z', data: { amountMinor: '250', currency: 'USD', asset: 'USDC', assetAmountMinor: '2500000' } };
    expect(eventLine(credited)).toBe('2026-11-27T10:00:00.000Z  deposit.credited  evt_4  amount=2.50 USD currency=USD asset=USDC assetAmount=2.500000 USDC');
    const e: RailEvent = { id: 'evt_1', type: 'payout.returned', createdAt: '2026-11-27T10:00:00.000Z', data: { payoutId: 'pay_1', amountMinor: '1200', rails: ['ach'], previous: null } };
    expect(eventLine(e)).toBe('2026-11-27T10:00:00.000Z  payout.returned  evt_1  payoutId=pay_1 amountMinor=1200 rails=["ach"] previous=-');
    expect(eventTable([e]).split('\n')).toEqual([
      'ID     TYPE             CREATED                   DATA',
      'evt_1  payout.returned  2026-11-27T10:00:00.000Z  payoutId=pay_1 amountMinor=1200 rails=["ach"] previous=-',
    ]);
    expect(eventTable([])).toBe('(no events)');
  });
});
