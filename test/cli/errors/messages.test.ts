/**
 * What the CLI says when it refuses: the next step fits the case (never the command that
 * just failed), messages name flags and commands rather than API fields and routes, and
 * pending work prints its next step. The built binary against a real sandbox gateway.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeError } from '../../../src/cli/errors/index.js';
import { AgentpayError } from '../../../packages/sdk/src/errors.js';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { cli, gatewayEnv, json, removeTempDirs, tempDir, type CliResult } from '../helpers.js';

let t: TestGateway;
let workspaceEnv: Record<string, string>;
let providerEnv: Record<string, string>;
const configDir = tempDir();

beforeAll(async () => {
  t = await startTestGateway();
  workspaceEnv = gatewayEnv(t, t.creds.workspace.apiKey);
  providerEnv = gatewayEnv(t, t.creds.provider.apiKey);
});
afterAll(async () => {
  await t.close();
  removeTempDirs();
});

const asWorkspace = (...args: string[]) => cli(args, { configDir, env: workspaceEnv });
const asProvider = (...args: string[]) => cli(args, { configDir, env: providerEnv });
const tryOf = (r: CliResult) => r.stderr.split('\n').find((l) => l.startsWith('Try: ')) ?? '';

describe('next steps for a key that cannot do it', () => {
  it('keys create --scopes capabilities:write with a workspace key points at a provider key, not at itself', async () => {
    const r = await asWorkspace('keys', 'create', '--scopes', 'capabilities:write');
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('error FORBIDDEN: a new key cannot hold the scope capabilities:write');
    expect(tryOf(r)).toContain('held only by provider keys');
    expect(tryOf(r)).toContain('--as provider');
    expect(tryOf(r)).toContain('--api-key PROVIDER_KEY');
  });

  it('publish with a workspace key points at a provider key, not at keys create', async () => {
    const r = await asWorkspace('publish', '--name', 'x', '--description', 'y', '--protocol', 'rest', '--price', '10', '--category', 'c', '--endpoint', 'https://x.example.com');
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('lacks the scope capabilities:write');
    expect(tryOf(r)).toContain('--as provider');
    expect(tryOf(r)).not.toContain('keys create');
  });

  it('sandbox price and keys rotate with a workspace key point at the operator key', async () => {
    for (const args of [['sandbox', 'price', '1.0'], ['keys', 'rotate']]) {
      const r = await asWorkspace(...args);
      expect(r.exitCode, args.join(' ')).toBe(1);
      expect(r.stderr).toContain('lacks the scope operator');
      expect(tryOf(r)).toContain('--as operator');
      expect(tryOf(r)).toContain('--api-key OPERATOR_KEY');
      expect(tryOf(r)).not.toContain('keys create');
    }
  });

  it('capabilities list with a workspace key says a provider key lists capabilities, not that the record is another tenant\'s', async () => {
    const r = await asWorkspace('capabilities', 'list');
    expect(r.exitCode).toBe(1);
    expect(tryOf(r)).toContain('use a provider key: --as provider');
    expect(tryOf(r)).not.toContain('another tenant');
  });

  it('a USDC top-up on a sandbox gateway points at deposit addresses, not at starting a sandbox gateway', async () => {
    const wallet = await t.workspace.wallets.create({ ownerType: 'workspace', ownerId: 'ops' });
    const r = await asWorkspace('wallets', 'topup', wallet.id, '--amount', '5000', '--asset', 'USDC');
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('error NOT_SUPPORTED:');
    expect(tryOf(r)).toContain('agentpay wallets deposit-address WALLET_ID');
    expect(tryOf(r)).not.toContain('npx agentpay dev');
  });

  it('providers request-verification with a workspace key says it takes the provider\'s own key, with or without an id', async () => {
    const bare = await asWorkspace('providers', 'request-verification');
    expect(bare.exitCode).toBe(2);
    expect(bare.stderr).toContain('a provider requests its own verification, with its own key');
    expect(bare.stderr).not.toContain('name the provider');
    expect(tryOf(bare)).toContain('--as provider');

    const named = await asWorkspace('providers', 'request-verification', t.creds.provider.id);
    expect(named.exitCode).toBe(1);
    expect(named.stderr).toContain('error FORBIDDEN: only the provider itself');
    expect(tryOf(named)).toContain("use the provider's own key (");
  });
});

describe('describeError for an action that takes another kind of key', () => {
  const refusedWith = (details: Record<string, unknown>) =>
    describeError(new AgentpayError('FORBIDDEN', 'not with this key', { status: 403, details })).tryNext;

  it('builds its hint from details.keyKinds and details.ownerId, whatever the message says', () => {
    expect(refusedWith({ keyKinds: ['provider'] })).toContain('use a provider key: --as provider');
    expect(refusedWith({ keyKinds: ['workspace', 'provider'] })).toMatch(/^use a workspace key \(--as workspace.*\) or a provider key \(--as provider/);
    expect(refusedWith({ keyKinds: ['provider'], ownerId: 'prv_1' })).toContain("use the provider's own key (prv_1): --as provider");
    expect(refusedWith({})).toContain('may belong to another tenant');
  });

  it('gets those details from the gateway, e.g. receipts listed with the operator key', async () => {
    const e = await t.operator.receipts.list().then(() => undefined, (err: unknown) => err);
    expect(e).toMatchObject({ code: 'FORBIDDEN', details: { keyKinds: ['workspace', 'provider'] } });
  });
});

describe('describeError for a missing scope, by the kind of key in use', () => {
  const lacks = (scope: string, apiKey: string) =>
    describeError(new AgentpayError('FORBIDDEN', `this API key lacks the scope ${scope}`, { status: 403, details: { scope } }), { apiKey }).tryNext;

  it('a narrowed key of a kind that may hold the scope gets keys create; another kind of key is pointed at the right kind', () => {
    expect(lacks('capabilities:write', 'ap_p_narrow')).toBe('create a key with that scope: agentpay keys create --scopes capabilities:write');
    expect(lacks('approvals:write', 'ap_w_agent')).toBe('create a key with that scope: agentpay keys create --scopes approvals:write');
    expect(lacks('capabilities:write', 'ap_w_x')).toContain('held only by provider keys: use one that holds it: --as provider');
    expect(lacks('policies:write', 'ap_p_x')).toContain('held only by workspace keys: use one that holds it: --as workspace');
    expect(lacks('operator', 'ap_p_x')).toContain('--as operator');
  });
});

describe('messages in CLI terms', () => {
  it('names --owner-id, not the API field ownerId; JSON keeps the gateway field and adds the flag', async () => {
    const r = await asWorkspace('wallets', 'create', '--owner-type', 'workspace', '--owner-id', '');
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('error VALIDATION_FAILED: --owner-id: must NOT have fewer than 1 characters');
    expect(tryOf(r)).toBe('Try: agentpay wallets create --help');

    const j = json(await asWorkspace('wallets', 'create', '--owner-type', 'workspace', '--owner-id', '', '--json'));
    expect(j.error).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'ownerId', flag: '--owner-id' } });
    expect(await t.workspace.wallets.list()).not.toContainEqual(expect.objectContaining({ ownerId: '' }));
  });

  it('payouts create without a destination names agentpay payouts destination set, not the API route', async () => {
    const r = await asProvider('payouts', 'create', '--amount', '50', '--rail', 'usdc_base');
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('register one with agentpay payouts destination set');
    expect(r.stderr).not.toContain('/v1/');
    expect(tryOf(r)).toContain('agentpay payouts destination set 0x…');
    const j = json(await asProvider('payouts', 'create', '--amount', '50', '--rail', 'usdc_base', '--json'));
    expect(j.error).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'destination', flag: '--destination' } });
    expect(j.error.message).toMatch(/^--destination: no USDC payout destination is registered for usdc_base; register one with agentpay payouts destination set$/);
    expect((await t.provider.payouts.list()).payouts).toEqual([]);
  });

  it('sandbox price abc names the PRICE argument, not the API field usdcPrice, and changes nothing', async () => {
    const before = await t.operator.sandbox.settings();
    const r = await cli(['sandbox', 'price', 'abc', '--json'], { configDir, env: gatewayEnv(t, t.creds.operatorKey) });
    expect(r.exitCode).toBe(1);
    const { error } = json(r);
    expect(error).toMatchObject({ code: 'VALIDATION_FAILED', details: { arg: 'PRICE' } });
    expect(error.message).toMatch(/^PRICE: must be a decimal USD price/);
    expect(error.message).not.toContain('usdcPrice');
    expect(await t.operator.sandbox.settings()).toEqual(before);
  });

  it('payouts create above the available balance says how much is available and how to see it, not to fund the wallet', async () => {
    await t.provider.payouts.setDestination(t.creds.provider.id, { destination: 'ext_acme_operating' });
    const r = await asProvider('payouts', 'create', '--amount', '99999999', '--rail', 'ach');
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('error INSUFFICIENT_FUNDS');
    const available = (await t.provider.wallets.balance(t.creds.provider.walletId)).availableMinor;
    expect(tryOf(r)).toContain(`pay out at most the available ${available}`);
    expect(tryOf(r)).toContain(`agentpay wallets balance ${t.creds.provider.walletId}`);
    expect(tryOf(r)).not.toContain('wallets fund');
    expect((await t.provider.payouts.list()).payouts).toEqual([]);
  });

  it('payouts list with a workspace key is the same usage error as the other payouts commands (exit 2)', async () => {
    for (const args of [['payouts', 'list'], ['payouts', 'destination', 'list'], ['payouts', 'create', '--amount', '5', '--rail', 'ach']]) {
      const r = await asWorkspace(...args, '--json');
      expect(r.exitCode, args.join(' ')).toBe(2);
      expect(json(r).error).toMatchObject({ code: 'USAGE', message: "this key belongs to a workspace; payouts are a provider's" });
    }
  });

  it('sandbox deposit --amount 1.5 says the amount is USDC base units (6 decimals), not cents', async () => {
    const r = await asWorkspace('sandbox', 'deposit', '0xabc', '--amount', '1.5');
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('--amount: must be a whole number of USDC base units (6 decimals: "1500000" is 1.5 USDC)');
    expect(r.stderr).not.toContain('"150" means 1.50');
  });
});

describe('agentpay signup without a terminal', () => {
  for (const mode of [['--json'], []]) {
    it(`prints the pending signup with its next step, on stderr and as next (${mode.join(' ') || 'piped'})`, async () => {
      const r = await cli(['signup', '--gateway-url', t.baseUrl, '--ca', join(t.dataDir, 'tls', 'ca.pem'), '--kind', 'workspace', '--name', 'Pending Ltd',
        '--email', `pending${mode.length}@x.test`, '--password', 'long enough password', ...mode], { configDir: tempDir() });
      expect(r.exitCode, r.stderr).toBe(0);
      const out = json(r);
      expect(out.signup.status).toBe('pending');
      expect(out.next).toBe(`agentpay signup --signup-id ${out.signup.id} --token TOKEN`);
      expect(r.stderr).toContain(`agentpay signup --signup-id ${out.signup.id} --token TOKEN`);
    });
  }
});

describe('publish flags', () => {
  it('help shows --endpoint or (--package-args with --package-version), not the two package flags as alternatives', async () => {
    const r = await cli(['publish', '--help'], { configDir });
    expect(r.exitCode).toBe(0);
    const usage = r.stdout.replace(/\s+/g, ' ');
    expect(usage).toContain('[--endpoint <value> | [--package-args <value> --package-version <value>]]');
    expect(usage).not.toContain('--package-args <value> | --package-command');
  });

  it('still refuses an endpoint with a package, and --package-args without --package-version (exit 2)', async () => {
    const both = await asProvider('publish', '--endpoint', 'https://x.example.com', '--package-args', '-y x@1.0.0', '--package-version', '1.0.0');
    expect(both.exitCode).toBe(2);
    const alone = await asProvider('publish', '--package-args', '-y x@1.0.0');
    expect(alone.exitCode).toBe(2);
    expect(alone.stderr).toContain('--package-version');
  });
});

describe('--as with a profile', () => {
  it('is refused, naming the profile, instead of being ignored; with --data-dir it picks that dev key', async () => {
    const dir = tempDir();
    const ca = join(t.dataDir, 'tls', 'ca.pem');
    const login = await cli(['login', '--gateway-url', t.baseUrl, '--ca', ca, '--api-key', t.creds.workspace.apiKey, '--profile', 'ws', '--json'], { configDir: dir });
    expect(login.exitCode, login.stderr).toBe(0);

    const r = await cli(['whoami', '--as', 'provider'], { configDir: dir });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('error USAGE: --as provider picks a dev key of a local gateway\'s data dir, but the key in use comes from profile "ws"');
    expect(tryOf(r)).toContain('--data-dir DIR --as provider');

    const dev = await cli(['whoami', '--as', 'provider', '--data-dir', t.dataDir, '--gateway-url', t.baseUrl, '--ca', ca, '--json'], { configDir: dir });
    expect(dev.exitCode, dev.stderr).toBe(0);
    expect(json(dev).tenant).toMatchObject({ kind: 'provider', id: t.creds.provider.id });
  });
});
