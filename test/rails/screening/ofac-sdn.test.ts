/**
 * OFAC SDN screening (src/rails/screening/ofac-sdn.ts) over a real sdn.csv file
 * (./sdn.csv: made-up entries in the published layout): addresses from the remarks'
 * "Digital Currency Address - …" entries are refused, letter case aside for EVM ones; the
 * list is re-read when the file changes; a missing, malformed or stale list makes
 * screening unavailable. Then in a gateway: a payout to a listed address is 403
 * SANCTIONED_ADDRESS and a missing list 503 TREASURY_UNAVAILABLE, nothing debited.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Stripe from 'stripe';
import { afterAll, describe, expect, it } from 'vitest';
import type { PayoutRail, RailAdapters } from '../../../src/domain/rails/adapters.js';
import { OfacSdnScreening, parseSdnCsv } from '../../../src/rails/screening/ofac-sdn.js';
import { STRIPE_SIGNATURE_HEADER, stripeAdapters } from '../../../src/rails/stripe/adapters.js';
import { ManualClock, startTestGateway } from '../../helpers/gateway.js';
import { DAY, HOUR, MINUTE, entries, expectConserved, refusedWith } from '../helpers.js';
import { FakeStripe } from '../stripe/fake-stripe.js';

const FIXTURE = new URL('./sdn.csv', import.meta.url);
const dir = mkdtempSync(join(tmpdir(), 'agentpay-sdn-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const T0 = Date.UTC(2026, 2, 3, 10, 0, 0);

/** a copy of the fixture in a fresh file, modified at `mtimeMs` */
function listFile(name: string, mtimeMs = T0) {
  const path = join(dir, name);
  copyFileSync(FIXTURE, path);
  utimesSync(path, mtimeMs / 1000, mtimeMs / 1000);
  return path;
}

describe('parseSdnCsv', () => {
  it('reads the twelve fields, quoted commas and quotes, -0- as none, and the addresses in the remarks', () => {
    const list = parseSdnCsv(readFileSync(FIXTURE, 'latin1'));
    expect(list.map((e) => [e.entNum, e.name, e.type])).toEqual([
      ['90001', 'EXAMPLE HOLDINGS, LTD.', ''], ['90002', 'MADEUP, Ivan', 'individual'], ['90003', 'SAMPLE VESSEL', 'vessel'], ['90004', 'TEST "QUOTED" TRADING CO.', ''],
    ]);
    expect(list[0]!.addresses).toEqual([
      { ticker: 'ETH', address: '0x7F367cC41522cE07553e823bf3be79A889DEbe1B' }, { ticker: 'USDC', address: '0xAbCdEf0123456789aBcDeF0123456789AbCdEf01' },
    ]);
    expect(list[1]!.addresses.map((a) => a.ticker)).toEqual(['XBT', 'ETH']);
    expect(list[2]!.addresses).toEqual([]);
    expect(list[3]!.addresses.at(-1)).toEqual({ ticker: 'ETH', address: '0x2222222222222222222222222222222222222222' });
  });

  it('refuses a file that is not the SDN layout', () => {
    expect(() => parseSdnCsv('ent_num,name\n1,x\n')).toThrow(/12/);
  });
});

describe('OfacSdnScreening', () => {
  it('refuses listed addresses whatever their letter case, clears others, and says which entry matched', async () => {
    const clock = new ManualClock(T0 + HOUR);
    const s = new OfacSdnScreening({ path: listFile('a.csv'), clock });
    expect(await s.screen('0x7f367cc41522ce07553e823bf3be79a889debe1b')).toBe('sanctioned');
    expect(await s.screen('0xABCDEF0123456789ABCDEF0123456789ABCDEF01')).toBe('sanctioned');
    expect(await s.screen('bc1qexampleexampleexampleexampleexample0z9')).toBe('sanctioned');
    expect(await s.screen('BC1QEXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLE0Z9')).toBe('clear'); // not an EVM address: exact
    expect(await s.screen(`0x${'ab'.repeat(20)}`)).toBe('clear');
    expect(await s.screen('ext_bank_0001')).toBe('clear');
    expect((await s.match('0x2222222222222222222222222222222222222222'))?.name).toBe('TEST "QUOTED" TRADING CO.');
    expect(s.loads).toBe(1);
    expect(await s.health()).toEqual({ status: 'operational', detail: '4 entries, 6 addresses, list 1 h old' });
  });

  it('re-reads the list when the file changes, and only then', async () => {
    const clock = new ManualClock(T0 + HOUR);
    const path = listFile('b.csv');
    const s = new OfacSdnScreening({ path, clock });
    const added = `0x${'cd'.repeat(20)}`;
    expect(await s.screen(added)).toBe('clear');
    expect(await s.screen(added)).toBe('clear');
    expect(s.loads).toBe(1);
    writeFileSync(path, `${readFileSync(FIXTURE, 'latin1').replace(/\x1a$/, '')}90005,"NEW LISTING","-0- ","CYBER2","-0- ","-0- ","-0- ","-0- ","-0- ","-0- ","-0- ","Digital Currency Address - ETH ${added};"\r\n`);
    utimesSync(path, (T0 + 2 * HOUR) / 1000, (T0 + 2 * HOUR) / 1000);
    expect(await s.screen(added)).toBe('sanctioned');
    expect(s.loads).toBe(2);
  });

  it('is unavailable (RailUnavailable) when the list is missing, malformed, empty or older than maxAgeMs', async () => {
    const clock = new ManualClock(T0 + HOUR);
    const missing = new OfacSdnScreening({ path: join(dir, 'nope.csv'), clock });
    await expect(missing.screen('0x1111111111111111111111111111111111111111')).rejects.toMatchObject({ name: 'RailUnavailable', service: 'screening', message: expect.stringContaining('ENOENT') });
    expect((await missing.health()).status).toBe('down');

    const bad = join(dir, 'bad.csv');
    writeFileSync(bad, 'not,the,sdn,list\n');
    await expect(new OfacSdnScreening({ path: bad, clock }).screen('x')).rejects.toMatchObject({ name: 'RailUnavailable', message: expect.stringContaining("not OFAC's sdn.csv") });
    const empty = join(dir, 'empty.csv');
    writeFileSync(empty, '\x1a');
    await expect(new OfacSdnScreening({ path: empty, clock }).screen('x')).rejects.toMatchObject({ message: expect.stringContaining('no entry') });

    const s = new OfacSdnScreening({ path: listFile('c.csv'), clock, maxAgeMs: DAY });
    expect(await s.screen('0x1111111111111111111111111111111111111111')).toBe('sanctioned');
    clock.advance(DAY); // now 25 h after the file's time
    await expect(s.screen(`0x${'ab'.repeat(20)}`)).rejects.toMatchObject({ name: 'RailUnavailable', message: expect.stringContaining('stale') });
  });
});

describe('a gateway screening payouts with the SDN list', () => {
  const clock = new ManualClock(T0 + HOUR);
  const listPath = listFile('gateway.csv');
  const sent: unknown[] = [];
  const chain: PayoutRail = {
    rails: ['usdc_base'],
    submit: async (p) => { sent.push(p); return { externalRef: `0xtx_${p.payoutId}`, expectedBy: clock.now() + MINUTE }; },
    status: async () => undefined,
    lookup: async () => undefined,
  };
  const WEBHOOK_SECRET = 'whsec_screening_test_secret_0123456789';
  let fake: FakeStripe;
  let t: Awaited<ReturnType<typeof startTestGateway>>;

  it('refuses a payout to a listed address with 403 SANCTIONED_ADDRESS, and with 503 TREASURY_UNAVAILABLE once the list is gone; nothing debited', async () => {
    fake = await new FakeStripe(() => clock.now()).start();
    const adapters: RailAdapters = {
      providers: [
        ...stripeAdapters({ secretKey: 'sk_test_fake', webhookSecret: WEBHOOK_SECRET, clock, webhookToleranceMs: 5 * MINUTE, api: fake.api, maxNetworkRetries: 0, payouts: false }),
        {
          info: { id: 'test-chain', name: 'test chain', adapterType: 'test', roles: ['payout'], currencies: ['USDC'], rails: ['usdc_base'], topUps: false, depositAddresses: false, faucet: false },
          status: async () => 'operational', payouts: chain,
        },
      ],
      screening: new OfacSdnScreening({ path: listPath, clock }),
      pricing: { usdcPriceMicros: async () => 1_000_000n },
    };
    t = await startTestGateway({ clock, config: { mode: 'production', rails: { adapters, pollIntervalMs: 0 } } });
    try {
      const s = await t.newProvider({ name: 'screened seller' });
      // funded by a card top-up through the Stripe adapter, confirmed by its signed webhook
      const i = await s.client.rail.topUp(s.walletId, { amountMinor: '5000' });
      const payload = JSON.stringify(fake.event('payment_intent.succeeded', fake.succeed(i.externalRef)));
      const signature = new Stripe('sk_test_unused').webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET, timestamp: Math.floor(clock.now() / 1000) });
      const f = await t.client().http.fetcher();
      const res = await f(`${t.baseUrl}/v1/rail/webhooks/stripe`, { method: 'POST', headers: { 'content-type': 'application/json', [STRIPE_SIGNATURE_HEADER]: signature }, body: payload });
      expect(res.status).toBe(200);

      await s.client.payouts.setDestination(s.id, { destination: '0x7F367cC41522cE07553e823bf3be79A889DEbe1B' });
      const e = await refusedWith(s.client.payouts.create({ walletId: s.walletId, amountMinor: '1000', rail: 'usdc_base' }), 403, 'SANCTIONED_ADDRESS');
      expect(e.details).toMatchObject({ destination: '0x7F367cC41522cE07553e823bf3be79A889DEbe1B' });
      expect(entries(t, s.walletId)).toEqual([['topup', '5000']]);

      rmSync(listPath);
      const gone = await refusedWith(s.client.payouts.create({ walletId: s.walletId, amountMinor: '1000', rail: 'usdc_base' }), 503, 'TREASURY_UNAVAILABLE');
      expect(gone.details).toMatchObject({ service: 'screening' });
      expect(gone.message).toContain('sanctions list');
      expect(entries(t, s.walletId)).toEqual([['topup', '5000']]);
      expect(sent).toEqual([]);
      expectConserved(t);
    } finally {
      await t.close();
      await fake.close();
    }
  });
});
