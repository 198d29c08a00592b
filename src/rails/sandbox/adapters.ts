/**
 * The sandbox adapters: the rail interfaces of src/domain/rails/adapters.ts implemented over the
 * simulated world of ./world.ts. A real adapter implements the same interfaces over a
 * processor's, custodian's or bank's API; nothing else changes.
 *
 *   sandbox-processor  top-ups (card or bank debit) confirmed by signed webhooks
 *   sandbox-chain      USDC on a simulated Base testnet: deposit addresses, deposits,
 *                      the faucet, USDC payouts (confirmed after minutes)
 *   sandbox-bank       bank_transfer and ach payouts (1 and 2 business days)
 * plus the sandbox screening list and USDC price feed.
 */
import type { DomainContext } from '../../domain/platform/context.js';
import type {
  ObservedDeposit, PayoutRailRecord, PricingService, RailAdapter, RailAdapters, ScreeningService, TopUpRail,
} from '../../domain/rails/adapters.js';
import { RailUnavailable } from '../../domain/rails/adapters.js';
import { parsePrice } from '../../domain/rails/pricing.js';
import { verifyWebhook } from '../../domain/rails/webhook-signature.js';
import { observed, SANDBOX_SIGNATURE_HEADER, SandboxWorld, type SandboxPayout, type SandboxWorldOptions } from './world.js';

/** The JSON the sandbox processor posts to POST /v1/rail/webhooks/sandbox-processor. */
export const SANDBOX_WEBHOOK_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'type', 'created', 'data'],
  properties: {
    id: { type: 'string', minLength: 1, maxLength: 100 },
    type: { type: 'string', enum: ['topup.succeeded', 'topup.declined'] },
    created: { type: 'integer', minimum: 0 },
    data: {
      type: 'object',
      additionalProperties: false,
      required: ['externalRef', 'amountMinor', 'currency'],
      properties: {
        externalRef: { type: 'string', minLength: 1, maxLength: 100 },
        amountMinor: { type: 'string', pattern: '^(0|[1-9][0-9]{0,15})$', 'x-amount': true },
        currency: { type: 'string', enum: ['USD', 'USDC'] },
        declineReason: { type: 'string', maxLength: 200 },
      },
    },
  },
} as const;

interface WebhookBody {
  id: string;
  type: 'topup.succeeded' | 'topup.declined';
  data: { externalRef: string; amountMinor: string; currency: 'USD' | 'USDC'; declineReason?: string };
}

const downIf = (down: boolean) => (down ? 'degraded' as const : 'operational' as const);

function processor(world: SandboxWorld, ctx: DomainContext, toleranceMs: number): RailAdapter {
  const topUps: TopUpRail = {
    currencies: ['USD'],
    webhookBodySchema: SANDBOX_WEBHOOK_SCHEMA,
    async createIntent({ amountMinor, currency }) {
      const i = await world.createIntent(amountMinor, currency);
      return {
        externalRef: i.ref,
        status: i.status === 'declined' ? 'declined' : 'pending',
        // where a person would pay; the sandbox has no page: confirm with POST /v1/sandbox/topups/:id/confirm
        hostedUrl: `https://processor.sandbox.invalid/pay/${i.ref}`,
        clientSecret: `${i.ref}_secret`,
        ...(i.declineReason ? { declineReason: i.declineReason } : {}),
      };
    },
    verifyWebhook(rawBody, headers) {
      verifyWebhook(world.opts.webhookSecret, rawBody, headers[SANDBOX_SIGNATURE_HEADER], ctx.clock.now(), toleranceMs, SANDBOX_SIGNATURE_HEADER);
      const b = JSON.parse(rawBody) as WebhookBody;
      return {
        id: b.id, type: b.type, externalRef: b.data.externalRef, amountMinor: BigInt(b.data.amountMinor), currency: b.data.currency,
        ...(b.data.declineReason ? { declineReason: b.data.declineReason } : {}),
      };
    },
    async lookup(ref) {
      const i = await world.intent(ref);
      return i && { status: i.status, amountMinor: BigInt(i.amountMinor) };
    },
  };
  return {
    info: {
      id: 'sandbox-processor', name: 'Sandbox card and bank processor', adapterType: 'sandbox_processor',
      roles: ['funding'], currencies: ['USD'], rails: ['ach'], topUps: true, depositAddresses: false, faucet: false,
    },
    status: async () => 'operational',
    topUps,
    treasury: { balance: async () => ({ asset: 'USD', amountMinor: (await world.holdings()).processorUsdMinor }) },
  };
}


const railRecord = (p: SandboxPayout): PayoutRailRecord => ({
  state: p.state, rail: p.rail, destination: p.destination, amountMinor: BigInt(p.amountMinor), asset: p.asset, ...(p.reason ? { reason: p.reason } : {}),
});

/**
 * Idempotent on payoutId: a payout the rail already took is answered as it is, even while the
 * rail is down (a resubmission after a lost response must learn that the rail holds it).
 */
async function submitOrRefuse(world: SandboxWorld, p: Parameters<SandboxWorld['submitPayout']>[0]) {
  const taken = await world.payoutById(p.payoutId);
  if (taken) return { externalRef: taken.ref, expectedBy: taken.settleAt };
  if ((await world.settings()).payoutsDown) throw new RailUnavailable('payouts', `the sandbox ${p.rail} rail is down (sandbox setting payoutsDown)`);
  const s = await world.submitPayout(p);
  return { externalRef: s.ref, expectedBy: s.settleAt };
}

/** The sandbox chain's and bank's payouts, as their PayoutRail reads them. */
function payoutRecords(world: SandboxWorld) {
  return {
    submit: (p: Parameters<SandboxWorld['submitPayout']>[0]) => submitOrRefuse(world, p),
    status: async (ref: string) => {
      const p = await world.payout(ref);
      return p && railRecord(p);
    },
    lookup: async (payoutId: string) => {
      const p = await world.payoutById(payoutId);
      return p && { ...railRecord(p), externalRef: p.ref };
    },
  };
}

function chain(world: SandboxWorld): RailAdapter {
  return {
    info: {
      id: 'sandbox-chain', name: 'Sandbox USDC on Base (testnet)', adapterType: 'sandbox_chain',
      roles: ['funding', 'payout'], currencies: ['USDC'], rails: ['usdc_base'], topUps: false, depositAddresses: true, faucet: true,
    },
    async status() {
      const s = await world.settings();
      return downIf(s.pricingDown || s.payoutsDown || s.screeningDown);
    },
    deposits: {
      chain: 'base',
      asset: 'USDC',
      createAddress: async (walletId) => world.depositAddressFor(walletId),
      async observedDeposits(cursor) {
        const { items, lastSeq } = await world.transfersSince(cursor ? Number(cursor) : 0);
        return { deposits: items.filter((t) => t.direction === 'in').map(observed), cursor: String(lastSeq) };
      },
      async lookupDeposit(ref) {
        const t = await world.transfer(ref.split(':')[0]!);
        return t && t.direction === 'in' ? observed(t) : undefined;
      },
      faucet: async (address, amountMinor) => observed(await world.transferIn(address, amountMinor, 'sandbox-faucet')),
    },
    payouts: {
      rails: ['usdc_base'],
      ...payoutRecords(world),
    },
    treasury: { balance: async () => ({ asset: 'USDC', amountMinor: (await world.holdings()).chainUsdcMinor }) },
  };
}

function bank(world: SandboxWorld): RailAdapter {
  return {
    info: {
      id: 'sandbox-bank', name: 'Sandbox bank (wire and ACH)', adapterType: 'sandbox_bank',
      roles: ['payout'], currencies: ['USD'], rails: ['bank_transfer', 'ach'], topUps: false, depositAddresses: false, faucet: false,
    },
    status: async () => downIf((await world.settings()).payoutsDown || (await world.settings()).screeningDown),
    payouts: {
      rails: ['bank_transfer', 'ach'],
      ...payoutRecords(world),
    },
    treasury: { balance: async () => ({ asset: 'USD', amountMinor: (await world.holdings()).bankUsdMinor }) },
  };
}

function screening(world: SandboxWorld): ScreeningService {
  return {
    async screen(destination) {
      if ((await world.settings()).screeningDown) throw new RailUnavailable('screening', 'the sandbox screening service is down (sandbox setting screeningDown)');
      return (await world.isSanctioned(destination)) ? 'sanctioned' : 'clear';
    },
  };
}

function pricing(world: SandboxWorld): PricingService {
  return {
    async usdcPriceMicros() {
      const s = await world.settings();
      if (s.pricingDown) throw new RailUnavailable('pricing', 'the sandbox USDC price feed is down (sandbox setting pricingDown)');
      return parsePrice(s.usdcPrice, 'usdcPrice');
    },
  };
}

/** Every sandbox adapter over one simulated world. */
export function sandboxAdapters(ctx: DomainContext, opts: SandboxWorldOptions & { webhookToleranceMs: number }): RailAdapters {
  const world = new SandboxWorld(ctx, opts);
  return {
    providers: [processor(world, ctx, opts.webhookToleranceMs), chain(world), bank(world)],
    screening: screening(world),
    pricing: pricing(world),
    sandbox: world,
  };
}
