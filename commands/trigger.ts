import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../src/cli/base-command.js';
import { usageError } from '../src/cli/errors/index.js';
import { makeClient } from '../src/cli/client.js';
import { readDevCredentials } from '../src/gateway/dev-credentials.js';
import { TRIGGERS, trigger } from '../src/cli/webhooks.js';
import { eventLine } from '../src/cli/events.js';

export default class Trigger extends BaseCommand<typeof Trigger> {
  static override summary = 'Sandbox: make an event really happen, through the API, to test your webhook endpoint or agentpay listen';
  static override description = [
    `Known: ${Object.keys(TRIGGERS).join(', ')}. payout.returned (a provider key) funds the settlement wallet with`,
    '--amount in the sandbox, pays it out by bank transfer (registering a first destination if there is none) and has',
    'the sandbox bank return it: the wallet ends up --amount richer and the event is recorded. approval.requested (a',
    'workspace key) has a fresh agent wallet buy the seller\'s "agentpay trigger" capability (published once, category',
    'agentpay-trigger) under an approval policy covering only that category (applied once): the purchase is held. The',
    'seller is --seller-key, or the local dev gateway\'s provider. wallet_provider.paused (a workspace key): a fresh',
    'agent wallet\'s three calls to that seller fail as provider errors (nothing charged), which pauses the seller for it.',
    'deposit.credited (a workspace or provider key): the sandbox chain sends --amount cents\' worth of test USDC to a',
    'deposit address of one of its wallets, credited at once while the sandbox USDC price is in band.',
    'payment.succeeded and payment.failed (a workspace key): a fresh agent wallet buys a call of the seller\'s "agentpay',
    'trigger (agentpay-trigger-sale)" capability, which the seller completes, or fails as client_error (the buyer refunded).',
    'Other types are not made yet; the error says how to',
    'cause them by hand. Needs a sandbox gateway.',
  ].join('\n');
  static override examples = ['<%= config.bin %> trigger payout.returned --as provider', '<%= config.bin %> trigger payout.returned --amount 250 --json'];
  static override args = { event: Args.string({ description: 'the event type', required: true }) };
  static override flags = {
    amount: Flags.string({ description: 'minor units moved (payout.returned), deposited (deposit.credited, in USD cents) or the price of the purchase (approval.requested, payment.*)', default: '100' }),
    'seller-key': Flags.string({ description: "approval.requested: a verified provider's API key to buy from [default: the local dev gateway's provider]", env: 'AGENTPAY_SELLER_KEY' }),
  };

  async run(): Promise<void> {
    if (!/^[1-9][0-9]{0,17}$/.test(this.flags.amount)) {
      throw usageError(`--amount: a whole number of minor units above 0, e.g. 100; got ${JSON.stringify(this.flags.amount)}`, undefined, { flag: '--amount' });
    }
    const conn = this.connection();
    const dataDir = conn.dataDir ?? conn.profileDataDir;
    const sellerKey = this.flags['seller-key'] ?? (dataDir ? readDevCredentials(dataDir)?.provider.apiKey : undefined);
    const seller = sellerKey ? makeClient(conn, { apiKey: sellerKey }) : undefined;
    const res = await trigger(this.client(), this.args.event, { amountMinor: this.flags.amount, seller });
    this.out.result(res, () => [...res.steps, '', res.event ? `Triggered: ${eventLine(res.event)}` : 'Triggered, but the event is not listed (yet)'].join('\n'));
  }
}
