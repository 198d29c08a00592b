/**
 * Where deliveries may go (docs/api/webhooks.md § Where deliveries may go): internal addresses
 * are refused when an endpoint is made (a literal address) and at every attempt (what a name
 * resolves to then, the connection going to the address checked), with a generic reason that
 * never says what answered. A sandbox gateway allows loopback; an operator's allow-list opens
 * internal ranges.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordEvent } from '../../src/domain/platform/events.js';
import { EgressPolicy, httpSender, parseWebhookKey, SecretBox, WebhookDeliverer, type Resolver } from '../../src/domain/platform/webhooks/index.js';
import { resolveConfig } from '../../src/gateway/config.js';
import { AgentpayError } from '../../packages/sdk/src/errors.js';
import { ManualClock, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { startReceiver, type Receiver } from './receiver.js';

const production = new EgressPolicy();
const sandbox = new EgressPolicy({ allowLoopback: true });

describe('the egress policy', () => {
  const internal = [
    '169.254.169.254', 'fd00:ec2::254', '10.0.0.1', '172.16.5.4', '192.168.1.1', '100.64.0.1', 'fe80::1', 'fc00::1',
    '0.0.0.0', '::', '224.0.0.251', 'ff02::1', '255.255.255.255',
    '::ffff:169.254.169.254', '::ffff:a9fe:a9fe', '::ffff:10.0.0.1', '::10.0.0.1',
    '64:ff9b::a9fe:a9fe', '64:ff9b::a00:1', '2002:a9fe:a9fe::1', '2001:db8::1',
  ];
  it('refuses internal addresses in every form, in production and in the sandbox', () => {
    for (const a of internal) {
      expect(production.allows(a), a).toBe(false);
      expect(sandbox.allows(a), a).toBe(false);
    }
  });
  it('allows loopback in the sandbox only, and public addresses everywhere', () => {
    for (const a of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) {
      expect(production.allows(a), a).toBe(false);
      expect(sandbox.allows(a), a).toBe(true);
    }
    for (const a of ['93.184.216.34', '2606:4700::6810:84e5', '::ffff:93.184.216.34', '64:ff9b::5db8:d822']) {
      expect(production.allows(a), a).toBe(true);
    }
    expect(production.allows('example.com')).toBe(false); // not an address: never connected to unchecked
  });
  it('allows what the operator lists, and nothing next to it', () => {
    const p = new EgressPolicy({ allow: ['10.20.0.0/16', 'fd12:3456::/32', '169.254.10.10'] });
    expect(p.allows('10.20.3.4')).toBe(true);
    expect(p.allows('::ffff:10.20.3.4')).toBe(true);
    expect(p.allows('10.21.0.1')).toBe(false);
    expect(p.allows('fd12:3456::9')).toBe(true);
    expect(p.allows('fd12:3457::9')).toBe(false);
    expect(p.allows('169.254.10.10')).toBe(true);
    expect(p.allows('169.254.169.254')).toBe(false);
  });
  it('is configured as webhooks.egressAllow, each entry checked', () => {
    expect(resolveConfig({ webhooks: { egressAllow: ['10.0.0.0/8', '::1'] } }).webhooks?.egressAllow).toEqual(['10.0.0.0/8', '::1']);
    expect(() => resolveConfig({ webhooks: { egressAllow: ['10.0.0.0/33'] } })).toThrow(/webhooks\.egressAllow: "10\.0\.0\.0\/33"/);
    expect(() => resolveConfig({ webhooks: { egressAllow: ['intranet'] } })).toThrow(/webhooks\.egressAllow: "intranet" is not an IP address/);
  });
});

const clock = new ManualClock(Date.now());
let t: TestGateway;
let rx: Receiver;

beforeAll(async () => {
  t = await startTestGateway({ clock });
  rx = await startReceiver();
});
afterAll(async () => {
  await rx?.close();
  await t?.close();
});

async function refusal(p: Promise<unknown>): Promise<AgentpayError> {
  const e = await p.then(() => { throw new Error('it was accepted'); }, (err: unknown) => err);
  expect(e).toBeInstanceOf(AgentpayError);
  return e as AgentpayError;
}

describe('an endpoint on a sandbox gateway', () => {
  it('is refused at a metadata, private, link-local, CGNAT, unique-local, unspecified, multicast or v4-mapped address (400 naming url)', async () => {
    const ws = await t.newWorkspace('Scanner');
    for (const url of [
      'http://169.254.169.254/latest/meta-data/', 'http://[fd00:ec2::254]/', 'http://10.0.0.1/hook', 'https://192.168.0.10/',
      'http://172.31.255.255:8080/', 'http://100.64.0.1/', 'http://[fe80::1]/', 'http://[fc00::5]/', 'http://0.0.0.0:4402/',
      'http://[::]/', 'http://224.0.0.1/', 'http://[::ffff:a9fe:a9fe]/', 'http://[::ffff:10.0.0.1]/', 'http://0xa9fea9fe/',
      'http://[64:ff9b::a9fe:a9fe]/',
    ]) {
      const e = await refusal(ws.client.webhooks.create({ url }));
      expect(e.status, url).toBe(400);
      expect(e.code, url).toBe('VALIDATION_FAILED');
      expect(e.details.field, url).toBe('url');
      expect(e.message).toMatch(/internal address/);
    }
    expect((await ws.client.webhooks.list()).endpoints).toEqual([]);
  });

  it('may be on loopback (local receivers), by address or by name', async () => {
    const ws = await t.newWorkspace('Local Dev');
    await expect(ws.client.webhooks.create({ url: rx.url })).resolves.toMatchObject({ endpoint: { url: rx.url } });
    await expect(ws.client.webhooks.create({ url: 'http://localhost:3000/hook' })).resolves.toBeDefined();
    await expect(ws.client.webhooks.create({ url: 'http://[::1]:3000/hook' })).resolves.toBeDefined();
  });
});

describe('an endpoint on a production gateway', () => {
  it('is refused on loopback too, unless the operator allows it', async () => {
    const g = await startTestGateway({ clock: new ManualClock(Date.now()), config: { mode: 'production' } });
    try {
      const ws = await g.newWorkspace('Prod');
      for (const url of ['https://127.0.0.1/hook', 'https://localhost/hook', 'https://[::1]/hook', 'https://[::ffff:127.0.0.1]/hook', 'https://api.localhost/hook']) {
        const e = await refusal(ws.client.webhooks.create({ url }));
        expect([e.code, e.details.field], url).toEqual(['VALIDATION_FAILED', 'url']);
      }
      await expect(ws.client.webhooks.create({ url: 'https://hooks.example.com/agentpay' })).resolves.toBeDefined();
    } finally {
      await g.close();
    }
    const allowed = await startTestGateway({ clock: new ManualClock(Date.now()), config: { mode: 'production', webhooks: { egressAllow: ['127.0.0.0/8'] } } });
    try {
      const ws = await allowed.newWorkspace('Prod Internal');
      await expect(ws.client.webhooks.create({ url: 'https://127.0.0.1:8443/hook' })).resolves.toBeDefined();
    } finally {
      await allowed.close();
    }
  });
});

describe('an endpoint with a host name', () => {
  /** a DNS that answers each lookup of a name with the next address given */
  function dns(answers: Record<string, string[]>): Resolver & { asked: string[] } {
    const asked: string[] = [];
    const f = async (host: string) => {
      asked.push(host);
      const list = answers[host];
      const address = list?.length && list.length > 1 ? list.shift()! : list?.[0];
      if (!address) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      return [{ address, family: address.includes(':') ? 6 : 4 }];
    };
    return Object.assign(f, { asked });
  }

  async function setup(name: string, resolve: Resolver, egress: EgressPolicy, port = new URL(rx.url).port) {
    const ws = await t.newWorkspace(`Named ${name}`);
    const { endpoint } = await ws.client.webhooks.create({ url: `http://${name}:${port}/hook` });
    const box = new SecretBox(parseWebhookKey(t.gw.services.config.webhooks!.secretKey!, 'key'));
    const deliverer = new WebhookDeliverer({ ctx: t.gw.services.ctx, box, send: httpSender({ egress, resolve }), timeoutMs: 2000 });
    const record = (n: number) => t.gw.store.tx((r) => recordEvent(r, t.gw.services.ctx, ws.id, 'payout.returned', { n }));
    const deliveries = async () => (await ws.client.webhooks.deliveries(endpoint.id)).deliveries;
    return { deliverer, record, deliveries };
  }

  it('is connected to the address its name resolved to, checked at each attempt: a rebinding to the metadata address is refused with a generic reason', async () => {
    const resolve = dns({ 'hooks.rebind.test': ['127.0.0.1', '169.254.169.254'] });
    const { deliverer, record, deliveries } = await setup('hooks.rebind.test', resolve, sandbox);
    await record(1);
    const before = rx.received.length;
    expect(await deliverer.runOnce()).toEqual({ attempted: 1, delivered: 1, failed: 0 });
    // it went to the address the check saw (the name itself resolves nowhere on this machine)
    expect(rx.received.length).toBe(before + 1);
    expect(rx.received.at(-1)!.headers.host).toBe(`hooks.rebind.test:${new URL(rx.url).port}`);

    await record(2);
    expect(await deliverer.runOnce()).toEqual({ attempted: 1, delivered: 0, failed: 1 });
    expect(rx.received.length).toBe(before + 1);
    const [latest] = await deliveries();
    expect(latest!.attempts).toEqual([expect.objectContaining({ status: null, error: 'the address is not allowed' })]);
    expect(JSON.stringify(latest)).not.toContain('169.254');
    expect(resolve.asked).toEqual(['hooks.rebind.test', 'hooks.rebind.test']);
  });

  it('is refused when any address of the name is internal, and on loopback on a production policy', async () => {
    const { deliverer, record, deliveries } = await setup('mixed.test', dns({ 'mixed.test': ['10.1.2.3'] }), sandbox);
    await record(1);
    expect(await deliverer.runOnce()).toMatchObject({ failed: 1 });
    expect((await deliveries())[0]!.attempts[0]!.error).toBe('the address is not allowed');

    const prod = await setup('loop.test', dns({ 'loop.test': ['127.0.0.1'] }), production);
    const before = rx.received.length;
    await prod.record(1);
    expect(await prod.deliverer.runOnce()).toMatchObject({ failed: 1 });
    expect(rx.received.length).toBe(before);
    expect((await prod.deliveries())[0]!.attempts[0]!.error).toBe('the address is not allowed');

    const allowed = await setup('allowed.test', dns({ 'allowed.test': ['127.0.0.1'] }), new EgressPolicy({ allow: ['127.0.0.0/8'] }));
    await allowed.record(1);
    expect(await allowed.deliverer.runOnce()).toMatchObject({ delivered: 1 });
  });

  it('records no answer in general words: neither the address nor what answered', async () => {
    const { deliverer, record, deliveries } = await setup('gone.test', dns({}), sandbox);
    await record(1);
    expect(await deliverer.runOnce()).toMatchObject({ failed: 1 });
    expect((await deliveries())[0]!.attempts[0]!.error).toBe('no answer: the name does not resolve');

    const closed = await startReceiver();
    await closed.close();
    const refused = await setup('closed.test', dns({ 'closed.test': ['127.0.0.1'] }), sandbox, new URL(closed.url).port);
    await refused.record(1);
    expect(await refused.deliverer.runOnce()).toMatchObject({ failed: 1 });
    const [d] = await refused.deliveries();
    expect(d!.attempts[0]!.error).toBe('no answer: the connection was refused');
    expect(JSON.stringify(d)).not.toMatch(/127\.0\.0\.1|ECONNREFUSED/);
  });
});
