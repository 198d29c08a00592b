/**
 * The work of the rail commands (`wallets topup`, `wallets deposit-address`, `payouts …`,
 * `rail …`, `sandbox …`): plain inputs in, API results out, plus how a person sees them.
 * Amounts stay the gateway's strings of integer minor units.
 */
import { randomUUID } from 'node:crypto';
import { isAppError, validationError } from '../core/errors.js';
import { parsePrice } from '../domain/rails/pricing.js';
import type { AgentpayClient } from 'agentpay-sdk/client';
import type { DepositAddress, Payout, PayoutDestination, RailProvider, RailTransaction, SandboxSettings, TopUpIntent } from 'agentpay-sdk/client';
import { CliError, usageError } from './errors/index.js';
import { outcomeUnknown, payoutMaybeMade } from './payouts.js';
import { moneyText, renderFields, renderTable } from './output.js';
import { parseAmountFlag } from './wallets.js';

export const RAIL_NAMES = ['bank_transfer', 'ach', 'usdc_base'] as const;

/** The provider of the key in use, for the payout commands. */
async function ownProvider(client: AgentpayClient): Promise<string> {
  const me = await client.auth.whoami();
  if (me.tenant.kind !== 'provider') {
    throw usageError(`this key belongs to ${me.tenant.kind === 'operator' ? 'an' : 'a'} ${me.tenant.kind}; payouts are a provider's`, 'use a provider key: --as provider, or --api-key PROVIDER_KEY');
  }
  return me.tenant.id;
}

export function topUp(client: AgentpayClient, walletId: string, input: { amount: string; asset?: 'USD' | 'USDC' | undefined; provider?: string | undefined }): Promise<TopUpIntent> {
  return client.rail.topUp(walletId, {
    amountMinor: parseAmountFlag(input.amount),
    ...(input.asset ? { asset: input.asset } : {}),
    ...(input.provider ? { treasuryProviderId: input.provider } : {}),
  });
}

export function depositAddress(client: AgentpayClient, walletId: string, provider?: string): Promise<DepositAddress> {
  return client.rail.depositAddress(walletId, provider ? { treasuryProviderId: provider } : {});
}

export async function setDestination(client: AgentpayClient, destination: string, opts: { asset?: 'USD' | 'USDC' | undefined; chain?: 'base' | undefined }) {
  return client.payouts.setDestination(await ownProvider(client), {
    destination, ...(opts.asset ? { asset: opts.asset } : {}), ...(opts.chain ? { chain: opts.chain } : {}),
  });
}

export async function listDestinations(client: AgentpayClient): Promise<PayoutDestination[]> {
  return client.payouts.destinations(await ownProvider(client));
}

/** A payout from the settlement wallet (the key's, unless --wallet) to the registered destination (unless --destination). */
export async function createPayout(client: AgentpayClient, input: {
  amount: string; rail: (typeof RAIL_NAMES)[number]; wallet?: string | undefined; destination?: string | undefined; provider?: string | undefined; idempotencyKey?: string | undefined;
}): Promise<Payout> {
  let walletId = input.wallet;
  if (!walletId) {
    await ownProvider(client);
    const [settlement] = await client.wallets.list();
    if (!settlement) throw new CliError('NO_SETTLEMENT_WALLET', 'this provider has no settlement wallet', { tryNext: 'pass --wallet WAL_ID' });
    walletId = settlement.id;
  }
  const amountMinor = parseAmountFlag(input.amount);
  // one key per run, known here: if no answer comes, a retry with it cannot pay twice
  const idempotencyKey = input.idempotencyKey ?? randomUUID();
  try {
    return await client.payouts.create({
      walletId, amountMinor, rail: input.rail,
      ...(input.destination ? { destination: input.destination } : {}),
      ...(input.provider ? { treasuryProviderId: input.provider } : {}),
    }, { idempotencyKey });
  } catch (e) {
    if (!outcomeUnknown(e)) throw e;
    const flags = ['--amount', amountMinor, '--rail', input.rail, ...(input.wallet ? ['--wallet', input.wallet] : []),
      ...(input.destination ? ['--destination', input.destination] : []), ...(input.provider ? ['--provider', input.provider] : [])];
    throw payoutMaybeMade(e, client.http.gatewayUrl, { flags, idempotencyKey });
  }
}

/**
 * `sandbox deposit --amount`: USDC base units (6 decimals), not cents, so a decimal such
 * as "1.5" is refused with its exact base-unit form ("1500000"), never rounded.
 */
export function parseUsdcAmountFlag(value: string): string {
  const m = /^([0-9]*)\.([0-9]+)$/.exec(value);
  if (m) {
    const units = m[2]!.length <= 6 ? `${m[1]}${m[2]!.padEnd(6, '0')}`.replace(/^0+(?=.)/, '') : undefined;
    const example = units && units !== '0' ? `"${units}" is ${value} USDC` : '"1500000" is 1.5 USDC';
    throw validationError('--amount', `must be a whole number of USDC base units (6 decimals: ${example}); got ${JSON.stringify(value)}`);
  }
  return parseAmountFlag(value);
}

/**
 * `sandbox price [PRICE]`: the settings, or a new USDC price. The price is checked first, with
 * the gateway's own parser, so that a typo names the PRICE argument, not the API field usdcPrice.
 */
export async function sandboxPrice(client: () => AgentpayClient, price: string | undefined): Promise<SandboxSettings> {
  if (price === undefined) return client().sandbox.settings();
  try {
    parsePrice(price, 'PRICE');
  } catch (e) {
    if (!isAppError(e)) throw e;
    throw new CliError(e.code, e.message, { tryNext: 'agentpay sandbox price 0.994 --as operator', details: { arg: 'PRICE' } });
  }
  return client().sandbox.update({ usdcPrice: price });
}

/** `sandbox confirm ID`: a top-up (`top_…`) is confirmed by the processor, a payout (`pay_…`) by its rail. */
export async function sandboxConfirm(client: AgentpayClient, id: string): Promise<{ transaction?: RailTransaction; payout?: Payout }> {
  if (id.startsWith('top_')) return { transaction: (await client.sandbox.confirmTopUp(id)).transaction };
  if (id.startsWith('pay_')) return client.sandbox.confirmPayout(id);
  throw usageError(`${id} is neither a top-up (top_…) nor a payout (pay_…)`, 'agentpay rail transactions lists them');
}

export async function sandboxDecline(client: AgentpayClient, id: string, reason?: string): Promise<RailTransaction> {
  if (!id.startsWith('top_')) throw usageError(`${id} is not a top-up (top_…); only top-ups are declined`);
  return (await client.sandbox.declineTopUp(id, reason)).transaction;
}

export async function sandboxReturn(client: AgentpayClient, id: string, reason?: string): Promise<Payout> {
  if (!id.startsWith('pay_')) throw usageError(`${id} is not a payout (pay_…); only payouts are returned`);
  return (await client.sandbox.returnPayout(id, reason)).payout;
}

// ---- how a person sees them ----

export function intentFields(i: TopUpIntent): string {
  return renderFields([
    ['top-up', i.transactionId],
    ['status', i.status],
    ['amount', `${i.amountMinor} ${i.currency} minor units`],
    ['wallet', i.walletId],
    ['processor', i.treasuryProviderId],
    ['external ref', i.externalRef],
    ['pay at', i.hostedUrl],
    ['decline reason', i.declineReason],
  ]);
}

export function addressFields(a: DepositAddress): string {
  return renderFields([['address', a.address], ['chain', a.chain], ['asset', a.asset], ['wallet', a.walletId], ['provider', a.treasuryProviderId], ['created', a.createdAt]]);
}

export function destinationTable(ds: readonly PayoutDestination[]): string {
  return renderTable(ds, [
    { header: 'ASSET', get: (d) => d.asset },
    { header: 'CHAIN', get: (d) => d.chain },
    { header: 'DESTINATION', get: (d) => d.destination },
    { header: 'RAILS', get: (d) => d.rails },
    { header: 'USABLE', get: (d) => (d.usable ? 'yes' : `from ${d.usableAt}`) },
  ], '(no payout destination registered: agentpay payouts destination set ext_… or 0x…)');
}

export function payoutFields(p: Payout): string {
  return renderFields([
    ['payout', p.id],
    ['status', p.status],
    ['amount', `${p.amountMinor} USD minor units`],
    ['on the rail', `${p.railAmountMinor} ${p.railCurrency} minor units${p.usdcPrice ? ` at ${p.usdcPrice}` : ''}`],
    ['rail', p.rail],
    ['destination', p.destination],
    ['expected by', p.expectedBy],
    ['reason', p.reason],
  ]);
}

export function payoutTable(ps: readonly Payout[]): string {
  return renderTable(ps, [
    { header: 'ID', get: (p) => p.id },
    { header: 'STATUS', get: (p) => p.status },
    { header: 'AMOUNT', get: (p) => moneyText(p.amountMinor, 'USD') },
    { header: 'RAIL', get: (p) => p.rail },
    { header: 'DESTINATION', get: (p) => p.destination },
    { header: 'CREATED', get: (p) => p.createdAt },
  ], '(no payouts)');
}

export function providerTable(ps: readonly RailProvider[]): string {
  return renderTable(ps, [
    { header: 'ID', get: (p) => p.id },
    { header: 'STATUS', get: (p) => p.status },
    { header: 'ROLES', get: (p) => p.roles },
    { header: 'CURRENCIES', get: (p) => p.currencies },
    { header: 'RAILS', get: (p) => p.rails },
    { header: 'TOP-UPS', get: (p) => (p.topUps ? 'yes' : 'no') },
    { header: 'DEPOSITS', get: (p) => (p.depositAddresses ? 'yes' : 'no') },
    { header: 'FAUCET', get: (p) => (p.faucet ? 'yes' : 'no') },
    { header: 'NAME', get: (p) => p.name },
  ], '(no rail providers: this gateway moves no money in or out)');
}

export function transactionTable(ts: readonly RailTransaction[]): string {
  return renderTable(ts, [
    { header: 'ID', get: (x) => x.id },
    { header: 'KIND', get: (x) => x.kind },
    { header: 'STATE', get: (x) => x.state },
    { header: 'ON RAIL', get: (x) => moneyText(x.railAmountMinor, x.railCurrency) },
    { header: 'CREDITED', get: (x) => moneyText(x.creditedMinor, 'USD') },
    { header: 'RAIL', get: (x) => x.rail },
    { header: 'WALLET', get: (x) => x.walletId },
    { header: 'REASON', get: (x) => x.reason },
  ], '(no rail transactions)');
}

export function settingsFields(s: SandboxSettings): string {
  return renderFields([
    ['USDC price', s.usdcPrice],
    ['screening', s.screeningDown ? 'down' : 'up'],
    ['pricing', s.pricingDown ? 'down' : 'up'],
    ['payout rails', s.payoutsDown ? 'down' : 'up'],
    ['sanctioned', s.sanctioned],
    ['treasury shortfall', s.treasuryShortfallMinor],
  ]);
}
