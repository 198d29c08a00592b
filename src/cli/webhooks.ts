/**
 * The work of `agentpay webhooks …`, `agentpay listen` and `agentpay trigger`: webhook endpoints
 * as a person sees them; following the caller's events and forwarding each, signed the way the
 * gateway signs deliveries, to a local URL (Stripe's `listen`); and making a sandbox event happen.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { EVENT_TYPES, type EventType } from 'agentpay-sdk/contract';
import { ensurePrivateDir, readTextFile, writeFileAtomic } from '../core/files.js';
import { SIGNATURE_HEADER, signWebhookPayload } from 'agentpay-sdk/webhooks';
import type { AgentpayClient, RailEvent, WebhookEndpoint, WebhookEndpointDelivery } from 'agentpay-sdk/client';
import { CliError, usageError } from './errors/index.js';
import { configDir } from './profile.js';
import { generateEd25519, signObject } from '../core/ed25519.js';
import { AgentpayError } from 'agentpay-sdk/errors';
import { renderFields, renderTable } from './output.js';

/** "a,b" → event types, each checked; the flag is named in the error. */
export function parseEventTypes(value: string, flag = '--events'): EventType[] {
  const types = value.split(',').map((s) => s.trim()).filter(Boolean);
  if (types.length === 0) throw usageError(`${flag}: list at least one event type, e.g. ${flag} approval.requested,payout.returned`, undefined, { flag });
  const unknown = types.filter((t) => !(EVENT_TYPES as readonly string[]).includes(t));
  if (unknown.length) throw usageError(`${flag}: ${unknown.join(', ')} is not an event type; use ${EVENT_TYPES.join(', ')}`, undefined, { flag });
  return [...new Set(types)] as EventType[];
}

/** A forward-to or endpoint URL: absolute http(s). */
export function parseHttpUrl(value: string, flag: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw usageError(`${flag}: ${JSON.stringify(value)} is not a URL; give an absolute one such as http://localhost:3000/hook`, undefined, { flag });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw usageError(`${flag}: must be http(s), got ${url.protocol}`, undefined, { flag });
  return url.toString();
}

export function endpointTable(endpoints: readonly WebhookEndpoint[]): string {
  return renderTable(endpoints, [
    { header: 'ID', get: (e) => e.id },
    { header: 'URL', get: (e) => e.url },
    { header: 'EVENTS', get: (e) => (e.eventTypes ? e.eventTypes.join(',') : 'all') },
    { header: 'DESCRIPTION', get: (e) => e.description ?? '' },
    { header: 'CREATED', get: (e) => e.createdAt },
  ], '(no webhook endpoints; add one with agentpay webhooks create --url URL)');
}

export function endpointFields(e: WebhookEndpoint, secret?: string): string {
  return renderFields([
    ['id', e.id],
    ['url', e.url],
    ['events', e.eventTypes ? e.eventTypes.join(', ') : 'all'],
    ...(e.description ? [['description', e.description] as const] : []),
    ['created', e.createdAt],
    ...(secret ? [['secret', `${secret}  (shown this once: keep it where your receiver can read it)`] as const] : []),
  ]);
}

export function deliveryTable(deliveries: readonly WebhookEndpointDelivery[]): string {
  return renderTable(deliveries, [
    { header: 'ID', get: (d) => d.id },
    { header: 'EVENT', get: (d) => `${d.eventType} ${d.eventId}` },
    { header: 'STATE', get: (d) => d.state },
    { header: 'ATTEMPTS', get: (d) => String(d.attempts.length) },
    { header: 'LAST', get: (d) => (d.attempts.length ? (d.attempts.at(-1)!.status !== null ? String(d.attempts.at(-1)!.status) : d.attempts.at(-1)!.error ?? '') : '-') },
    { header: 'NEXT', get: (d) => d.nextAttemptAt ?? (d.replayOf ? `replay of ${d.replayOf}` : '-') },
  ], '(no deliveries yet)');
}

// ---- listen ----

/**
 * The secret `listen` signs with: made once and kept in the CLI's config directory (0600), so a
 * local receiver configured with it keeps working across runs.
 */
export function listenSecret(env: NodeJS.ProcessEnv = process.env): string {
  const dir = configDir(env);
  const path = join(dir, 'listen-secret');
  if (existsSync(path)) {
    const s = readTextFile(path).trim();
    if (s.startsWith('whsec_') && s.length >= 40) return s;
  }
  ensurePrivateDir(dir);
  const secret = `whsec_${randomBytes(32).toString('base64url')}`;
  writeFileAtomic(path, secret + '\n', { mode: 0o600 });
  return secret;
}

export interface Forwarded {
  event: RailEvent;
  /** the local server's status, when it answered */
  status?: number;
  error?: string;
}

/** POSTs one event to `url`, signed as the gateway signs deliveries. Never throws. */
export async function forwardEvent(url: string, event: RailEvent, secret: string, opts: { timeoutMs?: number; now?: number } = {}): Promise<Forwarded> {
  const body = JSON.stringify(event);
  const header = await signWebhookPayload(body, secret, Math.floor((opts.now ?? Date.now()) / 1000));
  try {
    const res = await fetch(url, {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'agentpay-cli-listen/1',
        [SIGNATURE_HEADER]: header,
        'agentpay-event-id': event.id,
        'agentpay-event-type': event.type,
      },
      signal: AbortSignal.timeout(opts.timeoutMs ?? 10_000),
      redirect: 'manual',
    });
    await res.arrayBuffer().catch(() => undefined);
    return { event, status: res.status, ...(res.status < 200 || res.status > 299 ? { error: `answered ${res.status}` } : {}) };
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    return { event, error: cause?.code ?? cause?.message ?? (e as Error).message };
  }
}

export const forwardedLine = (f: Forwarded, url: string): string =>
  `${f.event.createdAt}  ${f.event.type}  ${f.event.id}  -> POST ${url} [${f.status ?? f.error}]${f.status !== undefined && f.error ? ' (failed)' : ''}`;

// ---- trigger ----

export interface TriggerResult {
  type: EventType;
  /** what was done to make it happen */
  steps: string[];
  /** the event, as GET /v1/events shows it */
  event: RailEvent | null;
}

export interface TriggerOptions {
  amountMinor: string;
  /** a verified provider's client, for the events that need a seller (approval.requested) */
  seller?: AgentpayClient | undefined;
  /** the operator's client, for the events that need the sandbox world moved (deposit.held, payout.failed, payout.resolved) */
  operator?: AgentpayClient | undefined;
}

const TRIGGER_CATEGORY = 'agentpay-trigger';
/** apart from TRIGGER_CATEGORY, so that its approval policy does not hold these purchases */
const BREAKER_CATEGORY = 'agentpay-trigger-breaker';
/** the payment events' purchases, apart from both above */
const SALE_CATEGORY = 'agentpay-trigger-sale';

/** The workspace key check and the seller, for the triggers that buy something. */
async function buyingSetup(client: AgentpayClient, o: TriggerOptions, type: string): Promise<AgentpayClient> {
  const me = await client.auth.whoami();
  if (me.tenant.kind !== 'workspace') {
    throw new CliError('FORBIDDEN', `${type} happens to a workspace's purchase; this key is a ${me.tenant.kind}'s`, { tryNext: `use a workspace key, e.g. agentpay trigger ${type} --as workspace` });
  }
  if (!o.seller) {
    throw usageError(`${type} needs a seller to buy from: pass --seller-key with a verified provider's key (a local dev gateway's is used when there is one)`, undefined, { flag: '--seller-key' });
  }
  return o.seller;
}

/** The seller's capability of this category, published on first use. */
async function triggerCapability(seller: AgentpayClient, category: string, priceMinor: string, steps: string[]): Promise<string> {
  const me = await seller.auth.whoami();
  const found = await seller.discovery.search({ category, limit: 100 });
  const existing = found.find((r) => r.provider.id === me.tenant.id)?.capability.id;
  if (existing) return existing;
  const { capability } = await seller.capabilities.publish({
    name: `agentpay trigger (${category})`, description: 'made by agentpay trigger to cause events in the sandbox', protocol: 'rest',
    priceMinor, category, endpoint: 'https://example.invalid/agentpay-trigger',
  });
  steps.push(`the seller published ${capability.id} (category ${category})`);
  return capability.id;
}

interface TriggerBuyer {
  walletId: string;
  privateKeyPem: string;
  /** the gateway's time when it made the wallet: a session's times are counted on the gateway's clock */
  createdAt: string;
}

/** A fresh agent wallet with a new key, funded (sandbox) for a few purchases. */
async function triggerWallet(client: AgentpayClient, priceMinor: string, steps: string[]): Promise<TriggerBuyer> {
  const pair = generateEd25519();
  const wallet = await client.wallets.create({ ownerType: 'agent', ownerId: 'agentpay-trigger', publicKeyPem: pair.publicKeyPem });
  const fund = (BigInt(priceMinor) * 3n).toString();
  await client.wallets.fund(wallet.id, fund);
  steps.push(`created the agent wallet ${wallet.id} and funded it with ${fund} (sandbox)`);
  return { walletId: wallet.id, privateKeyPem: pair.privateKeyPem, createdAt: wallet.createdAt };
}

/** What the seller middleware and the buyer do together: a challenge, the agent's signed proof, authorize. */
async function authorizeAs(seller: AgentpayClient, capabilityId: string, buyer: TriggerBuyer) {
  const challenge = await seller.payments.challenge(capabilityId);
  const unsigned = { version: 1 as const, challenge, walletId: buyer.walletId, signedAt: new Date().toISOString() };
  const payment = { ...unsigned, signature: signObject(buyer.privateKeyPem, unsigned as unknown as Record<string, unknown>) };
  return seller.payments.authorize({ capabilityId, payment: payment as never });
}

/** What the buyer and the seller middleware do to open a payment session: the open signed by the wallet key, forwarded by the seller. */
async function openSessionAs(seller: AgentpayClient, capabilityId: string, buyer: TriggerBuyer, capMinor: string, steps: string[]) {
  const me = await seller.auth.whoami();
  const sessionKey = generateEd25519();
  const now = Date.parse(buyer.createdAt);
  const unsigned = {
    version: 1 as const, type: 'session.open' as const, walletId: buyer.walletId, providerId: me.tenant.id, capabilityId, capMinor, currency: 'USD',
    expiresAt: new Date(now + 60 * 60 * 1000).toISOString(), sessionPublicKey: sessionKey.publicKeyPem,
    nonce: `agentpay-trigger-${randomBytes(12).toString('hex')}`, signedAt: new Date(now).toISOString(),
  };
  const open = { ...unsigned, signature: signObject(buyer.privateKeyPem, unsigned as unknown as Record<string, unknown>) };
  const { session } = await seller.sessions.open({ open, sellerPublicKey: generateEd25519().publicKeyPem });
  steps.push(`the seller opened session ${session.id} for ${buyer.walletId} with a cap of ${capMinor}: held on the wallet`);
  return { session, sessionKey };
}

/** The seller claims a voucher of `cumulativeMinor` (sequence 1) that the session key signed. */
async function claimAs(seller: AgentpayClient, sessionId: string, sessionKey: { privateKeyPem: string }, cumulativeMinor: string, steps: string[]): Promise<void> {
  const unsigned = { sessionId, cumulativeMinor, sequence: 1, requestHash: `sha256:${createHash('sha256').update('agentpay trigger').digest('hex')}` };
  const voucher = { ...unsigned, signature: signObject(sessionKey.privateKeyPem, unsigned) };
  const [outcome] = await seller.sessions.claim([{ sessionId, voucher }]);
  if (!outcome || outcome.status !== 200 || 'error' in outcome.body) {
    throw new CliError('NOT_CLAIMED', `the seller's claim of session ${sessionId} was refused: ${outcome && 'error' in outcome.body ? outcome.body.error.message : 'no answer'}`);
  }
  steps.push(`the seller claimed a voucher of ${cumulativeMinor} on ${sessionId}: ${outcome.body.amountMinor} moved from the hold (fee ${outcome.body.feeMinor})`);
}

/** A fresh agent wallet and an open session of the seller's sale capability, the cap twice the amount. */
async function sessionTrigger(client: AgentpayClient, o: TriggerOptions, type: string) {
  const seller = await buyingSetup(client, o, type);
  const steps: string[] = [];
  const capabilityId = await triggerCapability(seller, SALE_CATEGORY, o.amountMinor, steps);
  const buyer = await triggerWallet(client, o.amountMinor, steps);
  const opened = await openSessionAs(seller, capabilityId, buyer, (BigInt(o.amountMinor) * 2n).toString(), steps);
  return { seller, steps, ...opened };
}

/** The provider key check: its id and settlement wallet. */
async function providerOf(client: AgentpayClient, type: string): Promise<{ id: string; walletId: string }> {
  const me = await client.auth.whoami();
  if (me.tenant.kind !== 'provider' || !me.tenant.walletId) {
    throw new CliError('FORBIDDEN', `${type} happens to a provider's payout; this key is a ${me.tenant.kind}'s`, { tryNext: `use a provider key, e.g. agentpay trigger ${type} --as provider` });
  }
  return { id: me.tenant.id, walletId: me.tenant.walletId };
}

/** The operator's client, for the triggers that move the sandbox world. */
function operatorOf(o: TriggerOptions, type: string): AgentpayClient {
  if (!o.operator) {
    throw usageError(`${type} needs the operator to move the sandbox world: pass --operator-key (a local dev gateway's is used when there is one)`, undefined, { flag: '--operator-key' });
  }
  return o.operator;
}

/** A provider's settlement wallet funded with the amount (sandbox) and a bank destination (a first one, `ext_trigger_bank`, when there is none). */
async function payoutReady(client: AgentpayClient, me: { id: string; walletId: string }, amountMinor: string, steps: string[]): Promise<void> {
  await client.wallets.fund(me.walletId, amountMinor);
  steps.push(`funded ${me.walletId} with ${amountMinor} (sandbox)`);
  const bank = (await client.payouts.destinations(me.id)).find((d) => d.asset === 'USD');
  if (!bank) {
    await client.payouts.setDestination(me.id, { destination: 'ext_trigger_bank' });
    steps.push('registered the payout destination ext_trigger_bank (the first one: no cooldown)');
  }
}

/** A wallet of the caller's for money to arrive in: the provider's settlement wallet, else the first wallet listed, else a new agent wallet. */
async function receivingWallet(client: AgentpayClient, steps: string[]): Promise<string> {
  const me = await client.auth.whoami();
  let walletId = me.tenant.walletId ?? (await client.wallets.list())[0]?.id;
  if (!walletId) {
    walletId = (await client.wallets.create({ ownerType: 'agent', ownerId: 'agentpay-trigger', publicKeyPem: generateEd25519().publicKeyPem })).id;
    steps.push(`created the agent wallet ${walletId}`);
  }
  return walletId;
}

/** Runs `fn` with the sandbox settings patched, then puts back what they were. */
async function withSandbox<T>(operator: AgentpayClient, patch: Parameters<AgentpayClient['sandbox']['update']>[0], fn: () => Promise<T>): Promise<T> {
  const before = await operator.sandbox.settings();
  const restore = Object.fromEntries(Object.keys(patch).map((k) => [k, (before as unknown as Record<string, unknown>)[k]]));
  await operator.sandbox.update(patch);
  try {
    return await fn();
  } finally {
    await operator.sandbox.update(restore as typeof patch);
  }
}

/** The event types `agentpay trigger` can make happen, and how (docs/cli.md). */
export const TRIGGERS: Partial<Record<EventType, (client: AgentpayClient, o: TriggerOptions) => Promise<string[]>>> = {
  /**
   * a workspace: a purchase of the seller's "agentpay trigger" capability (published once, category
   * agentpay-trigger) by a fresh agent wallet, held by an approval policy that covers only that category
   */
  'approval.requested': async (client, o) => {
    const seller = await buyingSetup(client, o, 'approval.requested');
    const steps: string[] = [];
    const capabilityId = await triggerCapability(seller, TRIGGER_CATEGORY, o.amountMinor, steps);
    const policies = (await client.policies.list()).policies;
    if (!policies.some((p) => p.name === 'agentpay trigger' && p.enabled)) {
      await client.policies.apply(`approval "agentpay trigger":\n  category == "${TRIGGER_CATEGORY}"\n`);
      steps.push(`applied the policy "agentpay trigger": purchases in category ${TRIGGER_CATEGORY} wait for approval`);
    }
    const buyer = await triggerWallet(client, o.amountMinor, steps);
    try {
      await authorizeAs(seller, capabilityId, buyer);
    } catch (e) {
      if (e instanceof AgentpayError && e.code === 'APPROVAL_REQUIRED') {
        steps.push(`the purchase was held for approval${typeof e.body.approvalId === 'string' ? ` (${e.body.approvalId})` : ''}`);
        return steps;
      }
      throw e;
    }
    throw new CliError('NOT_HELD', 'the purchase went through instead of being held: another policy of this workspace decided first', { tryNext: 'agentpay policies list, and disable the rule that allowed it' });
  },
  // a workspace: three provider errors in a row from one seller for a fresh agent wallet (each call refunded)
  'wallet_provider.paused': async (client, o) => {
    const seller = await buyingSetup(client, o, 'wallet_provider.paused');
    const steps: string[] = [];
    const capabilityId = await triggerCapability(seller, BREAKER_CATEGORY, o.amountMinor, steps);
    const buyer = await triggerWallet(client, o.amountMinor, steps);
    for (let i = 1; i <= 3; i++) {
      const auth = await authorizeAs(seller, capabilityId, buyer);
      await seller.payments.fail({ transactionId: auth.transactionId, reason: 'provider_error', statusCode: 502 });
      steps.push(`call ${i}: the seller failed (provider_error); the hold was released`);
    }
    return steps;
  },
  // a workspace: a fresh agent wallet buys the seller's sale capability and the seller completes the call
  'payment.succeeded': async (client, o) => {
    const seller = await buyingSetup(client, o, 'payment.succeeded');
    const steps: string[] = [];
    const capabilityId = await triggerCapability(seller, SALE_CATEGORY, o.amountMinor, steps);
    const buyer = await triggerWallet(client, o.amountMinor, steps);
    const auth = await authorizeAs(seller, capabilityId, buyer);
    const body = Buffer.from('{"agentpay":"trigger"}');
    const { receipt } = await seller.payments.complete({ transactionId: auth.transactionId, responseHash: `sha256:${createHash('sha256').update(body).digest('hex')}` });
    steps.push(`bought a call of ${capabilityId} (${auth.transactionId}); the seller completed it: receipt ${receipt.id}`);
    return steps;
  },
  // a workspace: as payment.succeeded, but the seller reports the call failed (client_error: the breaker does not count it); the buyer is refunded
  'payment.failed': async (client, o) => {
    const seller = await buyingSetup(client, o, 'payment.failed');
    const steps: string[] = [];
    const capabilityId = await triggerCapability(seller, SALE_CATEGORY, o.amountMinor, steps);
    const buyer = await triggerWallet(client, o.amountMinor, steps);
    const auth = await authorizeAs(seller, capabilityId, buyer);
    const { receipt } = await seller.payments.fail({ transactionId: auth.transactionId, reason: 'client_error', statusCode: 400 });
    steps.push(`bought a call of ${capabilityId} (${auth.transactionId}); the seller failed it (client_error, HTTP 400) and the buyer was refunded: receipt ${receipt.id}`);
    return steps;
  },
  // a workspace: as payment.succeeded, but the seller leaves the call unresolved and has the sandbox expire it now, as the sweeper would after the in-flight time: the buyer refunded
  'payment.refunded': async (client, o) => {
    const seller = await buyingSetup(client, o, 'payment.refunded');
    const steps: string[] = [];
    const capabilityId = await triggerCapability(seller, SALE_CATEGORY, o.amountMinor, steps);
    const buyer = await triggerWallet(client, o.amountMinor, steps);
    const auth = await authorizeAs(seller, capabilityId, buyer);
    const receipt = await seller.sandbox.expireTransaction(auth.transactionId);
    steps.push(`bought a call of ${capabilityId} (${auth.transactionId}); the seller neither completed nor failed it, and the sandbox expired it now as the sweeper does after 15 minutes: the buyer was refunded, receipt ${receipt.id}`);
    return steps;
  },
  // a workspace: a fresh agent wallet opens a session (cap twice --amount) with the seller's sale capability
  'session.opened': async (client, o) => (await sessionTrigger(client, o, 'session.opened')).steps,
  // a workspace: as session.opened, then the seller claims a voucher of --amount
  'session.claimed': async (client, o) => {
    const { seller, steps, session, sessionKey } = await sessionTrigger(client, o, 'session.claimed');
    await claimAs(seller, session.id, sessionKey, o.amountMinor, steps);
    return steps;
  },
  // a workspace: as session.claimed, then the seller closes the session: the rest goes back to the wallet
  'session.closed': async (client, o) => {
    const { seller, steps, session, sessionKey } = await sessionTrigger(client, o, 'session.closed');
    await claimAs(seller, session.id, sessionKey, o.amountMinor, steps);
    const closed = await seller.sessions.close(session.id);
    steps.push(`the seller closed ${session.id}: ${BigInt(closed.capMinor) - BigInt(closed.claimedMinor)} released to ${closed.walletId}`);
    return steps;
  },
  // a workspace: as session.opened, then the seller has the sandbox expire the session now, as the sweeper does at the end of its claim window
  'session.expired': async (client, o) => {
    const { seller, steps, session } = await sessionTrigger(client, o, 'session.expired');
    const expired = await seller.sandbox.expireSession(session.id);
    steps.push(`the sandbox expired ${session.id} now, as the sweeper does when its claim window ends: ${expired.capMinor} released to ${expired.walletId}`);
    return steps;
  },
  // a provider: fund the settlement wallet, pay it out by bank transfer, and have the sandbox bank return it
  'payout.returned': async (client, o) => {
    const me = await providerOf(client, 'payout.returned');
    const steps: string[] = [];
    await payoutReady(client, me, o.amountMinor, steps);
    const payout = await client.payouts.create({ walletId: me.walletId, amountMinor: o.amountMinor, rail: 'bank_transfer' });
    steps.push(`paid out ${payout.id}`);
    await client.sandbox.returnPayout(payout.id, 'agentpay trigger');
    steps.push(`the sandbox bank returned ${payout.id}; the wallet is re-credited`);
    return steps;
  },
  // a provider: as payout.returned, but the sandbox bank pays the payout
  'payout.confirmed': async (client, o) => {
    const me = await providerOf(client, 'payout.confirmed');
    const steps: string[] = [];
    await payoutReady(client, me, o.amountMinor, steps);
    const payout = await client.payouts.create({ walletId: me.walletId, amountMinor: o.amountMinor, rail: 'bank_transfer' });
    steps.push(`paid out ${payout.id}`);
    await client.sandbox.confirmPayout(payout.id);
    steps.push(`the sandbox bank paid ${payout.id}`);
    return steps;
  },
  // a provider and the operator: the sandbox bank refuses payouts while the payout is made (then as it was): the payout fails and is re-credited
  'payout.failed': async (client, o) => {
    const me = await providerOf(client, 'payout.failed');
    const operator = operatorOf(o, 'payout.failed');
    const steps: string[] = [];
    await payoutReady(client, me, o.amountMinor, steps);
    await withSandbox(operator, { payoutsDown: true }, async () => {
      steps.push('the operator took the sandbox payout rail down');
      try {
        await client.payouts.create({ walletId: me.walletId, amountMinor: o.amountMinor, rail: 'bank_transfer' });
      } catch (e) {
        if (e instanceof AgentpayError && e.code === 'TREASURY_UNAVAILABLE') {
          steps.push(`the bank refused the payout${typeof e.details.payoutId === 'string' ? ` ${e.details.payoutId}` : ''} (503 TREASURY_UNAVAILABLE): it failed and the wallet is re-credited`);
          return;
        }
        throw e;
      }
      throw new CliError('NOT_FAILED', 'the payout went through although the sandbox payout rail was down', { tryNext: 'agentpay rail providers: is this a sandbox gateway?' });
    });
    steps.push('the sandbox payout rail is back as it was');
    return steps;
  },
  // a provider and the operator: a bank payout the rail has not settled, which the operator resolves as paid
  'payout.resolved': async (client, o) => {
    const me = await providerOf(client, 'payout.resolved');
    const operator = operatorOf(o, 'payout.resolved');
    const steps: string[] = [];
    await payoutReady(client, me, o.amountMinor, steps);
    const payout = await client.payouts.create({ walletId: me.walletId, amountMinor: o.amountMinor, rail: 'bank_transfer' });
    steps.push(`paid out ${payout.id} (the sandbox bank takes business days)`);
    await operator.payouts.resolve(payout.id, { outcome: 'paid', reason: 'agentpay trigger' });
    steps.push(`the operator resolved ${payout.id} as paid (also payout.confirmed)`);
    return steps;
  },
  /**
   * a provider: registers a new USDC payout destination (a fresh address on base), which freezes USDC
   * payouts for 24 hours when one was registered before (bank payouts are untouched)
   */
  'payout_destination.changed': async (client) => {
    const me = await providerOf(client, 'payout_destination.changed');
    const address = `0x${randomBytes(20).toString('hex')}`;
    const { changed } = await client.payouts.setDestination(me.id, { destination: address, asset: 'USDC', chain: 'base' });
    return [`registered the USDC payout destination ${address} on base${changed ? '; USDC payouts wait 24 hours when it replaced another (bank payouts do not)' : ''}`];
  },
  // a workspace or a provider: a top-up of one of its wallets, paid at the sandbox processor
  'topup.confirmed': async (client, o) => {
    const steps: string[] = [];
    const walletId = await receivingWallet(client, steps);
    const intent = await client.rail.topUp(walletId, { amountMinor: o.amountMinor });
    steps.push(`started the top-up ${intent.externalRef} of ${o.amountMinor} for ${walletId}`);
    const { transaction } = await client.sandbox.confirmTopUp(intent.transactionId);
    steps.push(`the sandbox processor confirmed it: ${transaction.id} credited ${transaction.creditedMinor}`);
    return steps;
  },
  // a workspace or a provider: as topup.confirmed, but the sandbox processor declines it (nothing credited)
  'topup.declined': async (client, o) => {
    const steps: string[] = [];
    const walletId = await receivingWallet(client, steps);
    const intent = await client.rail.topUp(walletId, { amountMinor: o.amountMinor });
    steps.push(`started the top-up ${intent.externalRef} of ${o.amountMinor} for ${walletId}`);
    await client.sandbox.declineTopUp(intent.transactionId, 'agentpay trigger');
    steps.push('the sandbox processor declined it: nothing credited');
    return steps;
  },
  // a workspace or a provider and the operator: the sandbox USDC price out of band while a deposit arrives (then as it was)
  'deposit.held': async (client, o) => {
    const operator = operatorOf(o, 'deposit.held');
    const steps: string[] = [];
    const walletId = await receivingWallet(client, steps);
    const { address } = await client.rail.depositAddress(walletId);
    const base = (BigInt(o.amountMinor) * 10_000n).toString();
    await withSandbox(operator, { usdcPrice: '0.98' }, async () => {
      steps.push('the operator moved the sandbox USDC price to 0.98, out of its band');
      try {
        await client.sandbox.deposit(address, base);
      } catch (e) {
        if (e instanceof AgentpayError && e.code === 'DEPOSIT_HELD') {
          steps.push(`the sandbox chain sent ${base} USDC base units to ${address} (wallet ${walletId}): held`);
          return;
        }
        throw e;
      }
      throw new CliError('NOT_HELD', 'the deposit was credited although the USDC price was out of band');
    });
    steps.push('the sandbox USDC price is back as it was: the rail job credits the held deposit (deposit.credited)');
    return steps;
  },
  // the operator: the sandbox treasury short while reconciliation runs, then covered again and reconciled (so also reconciliation.recovered)
  'reconciliation.shortfall': async (client) => reconciliationTrigger(client, 'reconciliation.shortfall'),
  // the operator: as reconciliation.shortfall, which ends with this event
  'reconciliation.recovered': async (client) => reconciliationTrigger(client, 'reconciliation.recovered'),
  /**
   * a workspace or a provider: test USDC (--amount cents' worth, 10,000 base units a cent) arrives on the
   * sandbox chain at the deposit address of one of its wallets (the provider's settlement wallet, else the
   * first wallet listed, else a new agent wallet) and is credited at once while the price is in band
   */
  'deposit.credited': async (client, o) => {
    const steps: string[] = [];
    const walletId = await receivingWallet(client, steps);
    const { address } = await client.rail.depositAddress(walletId);
    const base = (BigInt(o.amountMinor) * 10_000n).toString();
    try {
      const tx = await client.sandbox.deposit(address, base);
      steps.push(`the sandbox chain sent ${base} USDC base units to ${address} (wallet ${walletId}); ${tx.id} credited ${tx.creditedMinor} USD minor units`);
    } catch (e) {
      if (e instanceof AgentpayError && e.code === 'DEPOSIT_HELD') {
        throw new CliError('DEPOSIT_HELD', 'the deposit arrived but is held: the sandbox USDC price is outside the band, so nothing was credited', { tryNext: 'have the operator set the price back: agentpay sandbox price 1.0' });
      }
      throw e;
    }
    return steps;
  },
};

/** The sandbox treasury short by far more than any tolerance while reconciliation runs, then as it was and reconciled again. */
async function reconciliationTrigger(client: AgentpayClient, type: string): Promise<string[]> {
  const me = await client.auth.whoami();
  if (me.tenant.kind !== 'operator') {
    throw new CliError('FORBIDDEN', `${type} is the operator's event; this key is a ${me.tenant.kind}'s`, { tryNext: `use the operator key, e.g. agentpay trigger ${type} --as operator` });
  }
  const steps: string[] = [];
  const report = await withSandbox(client, { treasuryShortfallMinor: '1000000000000' }, async () => client.rail.reconcile());
  steps.push(`the sandbox treasury held 1000000000000 less than is owed; reconciliation: ${report.status}${report.paused ? ' (payouts paused)' : ''}`);
  const after = await client.rail.reconcile();
  steps.push(`the treasury as it was; reconciliation: ${after.status}${after.paused ? ' (payouts still paused)' : ' (payouts resumed)'}`);
  return steps;
}

/** Event types `agentpay trigger` cannot make, each with how to cause it by hand (test/webhooks/money-events.test.ts makes every other). */
export const NOT_YET: Partial<Record<EventType, string>> = {
  'x402.settlement_failed': 'needs a gateway with a chain for x402 "exact" (rails.adapters.exact; the sandbox has none) whose chain refuses a settlement after the seller\'s handler ran',
};

export async function trigger(client: AgentpayClient, type: string, o: TriggerOptions): Promise<TriggerResult> {
  if (!(EVENT_TYPES as readonly string[]).includes(type)) throw usageError(`${type} is not an event type; agentpay trigger knows ${Object.keys(TRIGGERS).join(', ')}`);
  const make = TRIGGERS[type as EventType];
  if (!make) {
    throw new CliError('NOT_SUPPORTED', `agentpay trigger cannot make ${type} happen yet: ${NOT_YET[type as EventType] ?? 'not implemented'}`, {
      tryNext: `agentpay trigger ${Object.keys(TRIGGERS).join(' | ')}`,
    });
  }
  const steps = await make(client, o);
  const { events } = await client.rail.events({ type, limit: 1 });
  return { type: type as EventType, steps, event: events[0] ?? null };
}
