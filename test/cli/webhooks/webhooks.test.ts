/**
 * `agentpay webhooks …`, `agentpay listen --forward-to` and `agentpay trigger` (the built binary)
 * against a real HTTPS gateway, with real HTTP receivers on 127.0.0.1: what `listen` forwards and
 * what the gateway delivers are both accepted by the SDK's signature check.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentpayClient, RailEvent } from '../../../packages/sdk/src/client/index.js';
import { SIGNATURE_HEADER, verifyWebhookSignature } from '../../../packages/sdk/src/webhooks.js';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { startReceiver, type Receiver } from '../../webhooks/receiver.js';
import { cli, gatewayEnv, json, removeTempDirs, spawnCli, tempDir } from '../helpers.js';
import { expectLedger } from '../../wallets/ledger-checks.js';

let t: TestGateway;
let seller: { id: string; apiKey: string; walletId: string; client: AgentpayClient };
let env: Record<string, string>;
let rx: Receiver;
const configDir = tempDir();
const run = (...args: string[]) => cli(args, { configDir, env });

beforeAll(async () => {
  t = await startTestGateway();
  seller = await t.newProvider({ name: 'Hooked Seller' });
  env = gatewayEnv(t, seller.apiKey);
  rx = await startReceiver('/hook');
});
afterAll(async () => {
  await rx?.close();
  await t?.close();
  removeTempDirs();
});

const balance = async () => BigInt((await seller.client.wallets.balance(seller.walletId)).balanceMinor);

describe('agentpay listen --forward-to', () => {
  it('forwards an event made by agentpay trigger, signed so that the SDK check accepts it with the secret printed at start', async () => {
    const listen = spawnCli(['listen', '--forward-to', rx.url, '--events', 'payout.returned', '--count', '1', '--interval', '1', '--timeout', '120', '--json'], { configDir, env });
    await listen.waitFor('stderr', 'Ready!');
    const start = JSON.parse(listen.stdout().split('\n')[0]!) as { secret: string; forwardTo: string };
    expect(start.secret).toMatch(/^whsec_/);
    expect(start.forwardTo).toBe(rx.url);
    expect(listen.stderr()).toContain(`Your webhook signing secret is ${start.secret}`);

    const before = await balance();
    const trig = await run('trigger', 'payout.returned', '--amount', '250', '--json');
    expect(trig.exitCode, trig.stderr).toBe(0);
    const triggered = json<{ type: string; steps: string[]; event: RailEvent }>(trig);
    expect(triggered.event).toMatchObject({ type: 'payout.returned', data: { amountMinor: '250' } });
    // funded 250, paid 250 out, the bank returned it: 250 richer, and the ledger says why
    expect(await balance()).toBe(before + 250n);
    const types = (await seller.client.wallets.ledger(seller.walletId)).slice(-3).map((e) => [e.type, e.amountMinor]);
    expect(types).toEqual([['fund', '250'], ['payout', '-250'], ['payout_return', '250']]);

    const r = await listen.done;
    expect(r.exitCode, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ event: { id: triggered.event.id }, status: 200, error: null });

    const got = rx.received.find((x) => x.headers['agentpay-event-id'] === triggered.event.id);
    expect(got).toBeDefined();
    const event = await verifyWebhookSignature(got!.rawBody, String(got!.headers[SIGNATURE_HEADER]), start.secret);
    expect(event).toEqual(triggered.event);
    await expect(verifyWebhookSignature(got!.rawBody, String(got!.headers[SIGNATURE_HEADER]), 'whsec_not_the_one')).rejects.toMatchObject({ reason: 'signature_mismatch' });

    // the same secret next time
    const again = spawnCli(['listen', '--forward-to', rx.url, '--timeout', '1', '--json'], { configDir, env });
    const end = await again.done;
    expect(end.exitCode, end.stderr).toBe(0);
    expect(JSON.parse(end.stdout.split('\n')[0]!).secret).toBe(start.secret);
  });

  it('refuses a --forward-to that is not an http(s) URL and an unknown --events type as usage errors naming the flag', async () => {
    const bad = await run('listen', '--forward-to', 'localhost:3000', '--json');
    expect(bad.exitCode).toBe(2);
    expect(json(bad).error).toMatchObject({ code: 'USAGE', details: { flag: '--forward-to' } });
    const types = await run('listen', '--forward-to', rx.url, '--events', 'payout.lost', '--json');
    expect(types.exitCode).toBe(2);
    expect(json(types).error).toMatchObject({ code: 'USAGE', details: { flag: '--events' } });
  });
});

describe('agentpay webhooks', () => {
  it('creates an endpoint that the gateway delivers to, lists it and its deliveries, replays one, deletes it', async () => {
    const created = await run('webhooks', 'create', '--url', rx.url, '--events', 'payout.returned', '--description', 'cli test', '--json');
    expect(created.exitCode, created.stderr).toBe(0);
    const { endpoint, secret } = json<{ endpoint: { id: string }; secret: string }>(created);
    expect(endpoint).toMatchObject({ url: rx.url, eventTypes: ['payout.returned'], description: 'cli test' });

    const list = json(await run('webhooks', 'list', '--json'));
    expect(list.endpoints.map((e: { id: string }) => e.id)).toContain(endpoint.id);
    expect(JSON.stringify(list)).not.toContain(secret);

    const trig = json<{ event: RailEvent }>(await run('trigger', 'payout.returned', '--json'));
    await t.gw.services.webhookDeliverer.runOnce();
    const got = rx.received.filter((x) => x.headers['agentpay-event-id'] === trig.event.id && x.headers['agentpay-delivery-id']);
    expect(got).toHaveLength(1);
    expect(await verifyWebhookSignature(got[0]!.rawBody, String(got[0]!.headers[SIGNATURE_HEADER]), secret)).toEqual(trig.event);

    const deliveries = json(await run('webhooks', 'deliveries', endpoint.id, '--json')).deliveries;
    expect(deliveries).toEqual([expect.objectContaining({ eventId: trig.event.id, state: 'delivered', lastStatus: 200 })]);
    const human = await cli(['webhooks', 'deliveries', endpoint.id], { configDir, env });
    expect(human.stdout).toContain('delivered');

    const retried = await run('webhooks', 'retry', endpoint.id, deliveries[0].id, '--json');
    expect(retried.exitCode, retried.stderr).toBe(0);
    expect(json(retried).delivery).toMatchObject({ replayOf: deliveries[0].id, state: 'pending' });

    // another tenant cannot delete it
    const ws = await t.newWorkspace('Onlooker');
    const theirs = await cli(['webhooks', 'delete', endpoint.id, '--json'], { configDir, env: gatewayEnv(t, ws.apiKey) });
    expect(theirs.exitCode).toBe(1);
    expect(json(theirs).error.code).toBe('NOT_FOUND');

    const deleted = await run('webhooks', 'delete', endpoint.id, '--json');
    expect(deleted.exitCode, deleted.stderr).toBe(0);
    expect(json(deleted)).toMatchObject({ deleted: true, endpoint: { id: endpoint.id } });
    expect(json(await run('webhooks', 'list', '--json')).endpoints.map((e: { id: string }) => e.id)).not.toContain(endpoint.id);
  });

  it('refuses an unknown --events type before calling the gateway (exit 2)', async () => {
    const r = await run('webhooks', 'create', '--url', rx.url, '--events', 'nope', '--json');
    expect(r.exitCode).toBe(2);
    expect(json(r).error).toMatchObject({ code: 'USAGE', details: { flag: '--events' } });
  });
});

describe('agentpay trigger', () => {
  it('refuses a made-up type (exit 2), naming the types it makes', async () => {
    const bad = await run('trigger', 'no.such', '--json');
    expect(bad.exitCode).toBe(2);
    expect(json(bad).error.message).toContain('payment.refunded');
  });

  it('deposit.credited makes a real sandbox USDC deposit to a wallet of the workspace, credited in the ledger and announced', async () => {
    const ws = await t.newWorkspace('Deposit Trigger');
    const r = await cli(['trigger', 'deposit.credited', '--amount', '250', '--json'], { configDir, env: gatewayEnv(t, ws.apiKey) });
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    const out = json<{ steps: string[]; event: RailEvent }>(r);
    const walletId = String(out.event.data.walletId);
    expect(out.event).toMatchObject({ type: 'deposit.credited', data: { amountMinor: '250', currency: 'USD', asset: 'USDC', assetAmountMinor: '2500000' } });
    expect(out.event.data.txHash).toMatch(/^0x[0-9a-f]+$/);
    const [entry] = await expectLedger(ws.client, walletId, ['250']);
    expect(entry).toMatchObject({ type: 'deposit' });
    const listed = (await ws.client.rail.events({ type: 'deposit.credited' })).events;
    expect(listed.map((e) => e.id)).toEqual([out.event.id]);
    const tx = (await ws.client.rail.transactions({ walletId })).transactions[0]!;
    expect(out.event.data.transactionId).toBe(tx.id);
    expect(tx).toMatchObject({ kind: 'deposit', state: 'confirmed', creditedMinor: '250' });
  });

  it('approval.requested holds a real purchase of a workspace (a seller given by --seller-key), again and again, changing the setup once', async () => {
    const ws = await t.newWorkspace('Trigger Workspace');
    const wsEnv = gatewayEnv(t, ws.apiKey);
    const noSeller = await cli(['trigger', 'approval.requested', '--json'], { configDir, env: wsEnv });
    expect(noSeller.exitCode).toBe(2);
    expect(json(noSeller).error.details.flag).toBe('--seller-key');

    const first = await cli(['trigger', 'approval.requested', '--seller-key', seller.apiKey, '--json'], { configDir, env: wsEnv });
    expect(first.exitCode, first.stderr + first.stdout).toBe(0);
    const a = json<{ steps: string[]; event: RailEvent }>(first);
    expect(a.event).toMatchObject({ type: 'approval.requested', data: { amountMinor: '100' } });
    expect(a.steps.join('\n')).toContain('published');
    expect(a.steps.join('\n')).toContain('applied the policy');
    const approval = await ws.client.approvals.get(String(a.event.data.approvalId));
    expect(approval.approval.status).toBe('pending');

    const second = json<{ steps: string[]; event: RailEvent }>(await cli(['trigger', 'approval.requested', '--json'], { configDir, env: { ...wsEnv, AGENTPAY_SELLER_KEY: seller.apiKey } }));
    expect(second.event.type).toBe('approval.requested');
    expect(second.event.id).not.toBe(a.event.id);
    expect(second.steps.join('\n')).not.toContain('published');
    expect(second.steps.join('\n')).not.toContain('applied the policy');
    expect((await ws.client.policies.list()).policies.filter((p) => p.name === 'agentpay trigger')).toHaveLength(1);
  });

  it('wallet_provider.paused: three provider errors in a row pause the seller for a fresh wallet, and every hold comes back', async () => {
    const ws = await t.newWorkspace('Breaker Workspace');
    const r = await cli(['trigger', 'wallet_provider.paused', '--seller-key', seller.apiKey, '--amount', '40', '--json'], { configDir, env: gatewayEnv(t, ws.apiKey) });
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    const { event } = json<{ event: RailEvent }>(r);
    expect(event).toMatchObject({ type: 'wallet_provider.paused', data: { providerId: seller.id, consecutiveFailures: 3 } });
    const walletId = String(event.data.walletId);
    expect((await ws.client.wallets.breaker(walletId, seller.id)).paused).toBe(true);
    // funded 3 x 40; three failed calls charge nothing
    const balance = await ws.client.wallets.balance(walletId);
    expect([balance.balanceMinor, balance.availableMinor]).toEqual(['120', '120']);
  });

  it('payout.failed takes the operator (--operator-key) to take the sandbox payout rail down, and puts it back', async () => {
    const p = await t.newProvider({ name: 'Failed Payout Trigger' });
    const env = gatewayEnv(t, p.apiKey);
    const noOperator = await cli(['trigger', 'payout.failed', '--json'], { configDir, env });
    expect(noOperator.exitCode).toBe(2);
    expect(json(noOperator).error.details.flag).toBe('--operator-key');

    const r = await cli(['trigger', 'payout.failed', '--operator-key', t.creds.operatorKey, '--amount', '300', '--json'], { configDir, env });
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    const { event } = json<{ event: RailEvent }>(r);
    expect(event).toMatchObject({ type: 'payout.failed', data: { walletId: p.walletId, status: 'failed', amountMinor: '300', rail: 'bank_transfer', externalRef: null } });
    expect((await t.operator.sandbox.settings()).payoutsDown).toBe(false);
    // funded 300, paid out 300, re-credited 300
    const [, , back] = await expectLedger(p.client, p.walletId, ['300', '-300', '300']);
    expect(back).toMatchObject({ type: 'payout_return' });
  });

  it('payout.returned with a workspace key says it needs a provider key', async () => {
    const ws = await t.newWorkspace('Not a seller');
    const r = await cli(['trigger', 'payout.returned', '--json'], { configDir, env: gatewayEnv(t, ws.apiKey) });
    expect(r.exitCode).toBe(1);
    expect(json(r).error.code).toBe('FORBIDDEN');
  });
});
