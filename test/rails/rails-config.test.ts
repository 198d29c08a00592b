/**
 * The `rails` section of `agentpay gateway start --config`: real adapters named with their
 * settings (src/rails/config.ts), secrets only from the environment or 0600 files, refused
 * naming the key; a production gateway refuses sandbox parts; GET /v1/rail/providers (and
 * `agentpay rail providers`) shows the adapters' and the screening's health.
 */
import { chmodSync, copyFileSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { gatewayStartOptions } from '../../src/cli/gateway-config.js';
import { resolveRails } from '../../src/domain/rails/config.js';
import { cli, gatewayEnv, json, removeTempDirs, tempDir } from '../cli/helpers.js';
import { startTestGateway } from '../helpers/gateway.js';
import { FakeStripe } from './stripe/fake-stripe.js';

afterAll(removeTempDirs);
const configDir = tempDir();
const SDN = new URL('./screening/sdn.csv', import.meta.url);
const ENV = { STRIPE_SECRET_KEY: 'sk_test_fake', STRIPE_WEBHOOK_SECRET: 'whsec_from_env_0123456789' };

function configFile(content: unknown): { dir: string; file: string } {
  const dir = tempDir();
  const file = join(dir, 'agentpay.json');
  writeFileSync(file, JSON.stringify(content));
  return { dir, file };
}

const refusal = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return e as { code: string; message: string; details: Record<string, unknown>; tryNext?: string };
  }
  throw new Error('expected a refusal');
};

describe('the rails section of the config file', () => {
  it('builds the Stripe adapters and OFAC screening, secrets from the environment, and the gateway shows them with health', async () => {
    const fake = await new FakeStripe(() => Date.now()).start();
    const { dir, file } = configFile({
      mode: 'production',
      rails: { stripe: { apiUrl: `http://127.0.0.1:${fake.port}` }, screening: { ofacSdn: { path: 'sdn.csv' } }, pollIntervalMs: 0 },
    });
    copyFileSync(SDN, join(dir, 'sdn.csv')); // modified now: fresh
    const opts = gatewayStartOptions({ config: file }, dir, ENV);
    const rails = opts.config.rails!;
    expect(typeof rails.adapters).toBe('object');
    expect(rails.pollIntervalMs).toBe(0);
    const t = await startTestGateway({ config: opts.config });
    try {
      const res = await t.provider.rail.providers();
      expect(res.sandbox).toBe(false);
      expect(res.providers.map((p) => [p.id, p.adapterType, p.status])).toEqual([['stripe', 'stripe', 'operational'], ['stripe-payouts', 'stripe', 'operational']]);
      expect(res.screening).toEqual({ status: 'operational', detail: '4 entries, 6 addresses, list 0 h old' });
      // and the built binary shows the same: `agentpay rail providers --json` (its table is for a terminal)
      const env = { ...gatewayEnv(t), AGENTPAY_API_KEY: t.creds.provider.apiKey };
      const listed = json(await cli(['rail', 'providers', '--json'], { configDir, env }));
      expect(listed).toMatchObject({ sandbox: false, screening: { status: 'operational', detail: '4 entries, 6 addresses, list 0 h old' } });
      expect(listed.providers.map((p: { id: string; status: string }) => [p.id, p.status])).toEqual([['stripe', 'operational'], ['stripe-payouts', 'operational']]);
      // the webhook route exists for the Stripe adapter, and checks Stripe's signature
      const f = await t.client().http.fetcher();
      const hook = await f(`${t.baseUrl}/v1/rail/webhooks/stripe`, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' }, body: '{"id":"evt_1","type":"payment_intent.succeeded","data":{}}' });
      expect(hook.status).toBe(400);
    } finally {
      await t.close();
      await fake.close();
    }
  });

  it('reads secrets from 0600 files and refuses a file others can read, naming the key and saying what to do', () => {
    const { dir, file } = configFile({ mode: 'production', rails: { stripe: { payouts: false, secretKeyFile: 'sk', webhookSecretFile: 'wh' } } });
    writeFileSync(join(dir, 'sk'), 'sk_test_fake\n', { mode: 0o600 });
    writeFileSync(join(dir, 'wh'), 'whsec_file\n', { mode: 0o644 });
    chmodSync(join(dir, 'wh'), 0o644);
    const e = refusal(() => gatewayStartOptions({ config: file }, dir, {}));
    expect(e).toMatchObject({ code: 'CONFIG_INVALID', details: { file, field: 'stripe.webhookSecretFile' }, tryNext: `chmod 600 ${join(dir, 'wh')}` });
    expect(e.message).toContain('readable by others (mode 644)');
    expect(e.message).not.toContain('whsec_file');
    chmodSync(join(dir, 'wh'), 0o600);
    const opts = gatewayStartOptions({ config: file }, dir, {});
    const adapters = opts.config.rails!.adapters as Exclude<NonNullable<typeof opts.config.rails>['adapters'], string>;
    expect(adapters!.providers.map((p) => p.info.id)).toEqual(['stripe']);
  });

  it('refuses a secret written in the config file, a missing secret, unknown keys and payouts without screening', () => {
    const dir = tempDir();
    const inline = configFile({ rails: { stripe: { secretKey: 'sk_live_oops' } } });
    expect(refusal(() => gatewayStartOptions({ config: inline.file }, dir, ENV))).toMatchObject({
      code: 'CONFIG_INVALID', details: { field: 'rails.stripe.secretKey' }, message: expect.stringContaining('secrets never go in the config file'),
    });
    const noEnv = configFile({ rails: { stripe: {}, screening: { ofacSdn: { path: 'x.csv' } } } });
    expect(refusal(() => gatewayStartOptions({ config: noEnv.file }, dir, {}))).toMatchObject({ details: { field: 'stripe.secretKeyFile' }, message: expect.stringContaining('STRIPE_SECRET_KEY') });
    const unknown = configFile({ rails: { stripe: { topups: true } } });
    expect(refusal(() => gatewayStartOptions({ config: unknown.file }, dir, ENV)).message).toContain('rails.stripe.topups is not a setting');
    const plainCheckout = configFile({ rails: { stripe: { checkout: { successUrl: 'http://x.test/ok', cancelUrl: 'https://x.test/no' } } } });
    expect(refusal(() => gatewayStartOptions({ config: plainCheckout.file }, dir, ENV))).toMatchObject({ details: { field: 'rails.stripe.checkout' } });
    const unscreened = configFile({ mode: 'production', rails: { stripe: {} } });
    expect(refusal(() => gatewayStartOptions({ config: unscreened.file }, dir, ENV))).toMatchObject({ details: { field: 'rails.screening' } });
  });

  it('a production gateway refuses sandbox parts: the sandbox screening, and sandbox adapters passed in an adapters object', async () => {
    const { dir, file } = configFile({ mode: 'production', rails: { stripe: {}, screening: 'sandbox' } });
    const r = await cli(['gateway', 'start', '--config', file, '--port', '0', '--data-dir', join(dir, 'data'), '--json'], { configDir, cwd: dir, env: ENV });
    expect(r.exitCode).toBe(2);
    expect(json(r).error).toMatchObject({ code: 'CONFIG_INVALID', details: { file, field: 'rails.screening' }, message: expect.stringContaining('refused in production mode') });
    expect(existsSync(join(dir, 'data'))).toBe(false);
    // allowed in sandbox mode
    expect(gatewayStartOptions({ config: configFile({ mode: 'sandbox', rails: { stripe: {}, screening: 'sandbox' } }).file }, dir, ENV).config.mode).toBe('sandbox');

    const fakeSandbox = { info: { id: 'sandbox-bank', name: 'x', adapterType: 'sandbox_bank', roles: [], currencies: [], rails: [], topUps: false, depositAddresses: false, faucet: false }, status: async () => 'operational' as const };
    expect(() => resolveRails({ adapters: { providers: [fakeSandbox], screening: { screen: async () => 'clear' }, pricing: { usdcPriceMicros: async () => 1_000_000n } } }, 'production'))
      .toThrow('the sandbox adapter sandbox-bank is refused in production mode');
  });
});
