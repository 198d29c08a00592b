import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../src/cli/base-command.js';
import { usageError } from '../src/cli/errors/index.js';
import { makeClient } from '../src/cli/client.js';
import { readDevCredentials } from '../src/gateway/dev-credentials.js';
import { NOT_YET, TRIGGERS, trigger } from '../src/cli/webhooks.js';
import { eventLine } from '../src/cli/events.js';

export default class Trigger extends BaseCommand<typeof Trigger> {
  static override summary = 'Sandbox: make an event really happen, through the API, to test your webhook endpoint or agentpay listen';
  static override description = [
    `Known: ${Object.keys(TRIGGERS).join(', ')}. Each is made as the real thing would be, on a sandbox gateway`,
    '(what each does, and the key it needs: docs/cli.md, agentpay trigger). payment.*, session.*, approval.requested and',
    'wallet_provider.paused take a workspace key and buy from --seller-key (or the local dev gateway\'s provider);',
    'payout.* and payout_destination.changed take a provider key; topup.* and deposit.* a workspace or provider key;',
    'reconciliation.* the operator key. deposit.held, payout.failed and payout.resolved also need the operator',
    '(--operator-key, or the local dev gateway\'s), who moves the sandbox world for them and then puts it back.',
    `${Object.keys(NOT_YET).length ? `Not made: ${Object.keys(NOT_YET).join(', ')} (the error says how to cause it by hand). ` : ''}Needs a sandbox gateway.`,
  ].join('\n');
  static override examples = ['<%= config.bin %> trigger payout.returned --as provider', '<%= config.bin %> trigger payout.returned --amount 250 --json'];
  static override args = { event: Args.string({ description: 'the event type', required: true }) };
  static override flags = {
    amount: Flags.string({ description: 'minor units paid out (payout.*), topped up (topup.*), deposited (deposit.*, in USD cents) or the price of the purchase (approval.requested, payment.*; session.*: the claim, the cap twice it)', default: '100' }),
    'seller-key': Flags.string({ description: "approval.requested: a verified provider's API key to buy from [default: the local dev gateway's provider]", env: 'AGENTPAY_SELLER_KEY' }),
    'operator-key': Flags.string({ description: "deposit.held, payout.failed, payout.resolved: the operator's API key, to move the sandbox world [default: the local dev gateway's]", env: 'AGENTPAY_OPERATOR_KEY' }),
  };

  async run(): Promise<void> {
    if (!/^[1-9][0-9]{0,17}$/.test(this.flags.amount)) {
      throw usageError(`--amount: a whole number of minor units above 0, e.g. 100; got ${JSON.stringify(this.flags.amount)}`, undefined, { flag: '--amount' });
    }
    const conn = this.connection();
    const dataDir = conn.dataDir ?? conn.profileDataDir;
    const sellerKey = this.flags['seller-key'] ?? (dataDir ? readDevCredentials(dataDir)?.provider.apiKey : undefined);
    const seller = sellerKey ? makeClient(conn, { apiKey: sellerKey }) : undefined;
    const operatorKey = this.flags['operator-key'] ?? (dataDir ? readDevCredentials(dataDir)?.operatorKey : undefined);
    const operator = operatorKey ? makeClient(conn, { apiKey: operatorKey }) : undefined;
    const res = await trigger(this.client(), this.args.event, { amountMinor: this.flags.amount, seller, operator });
    this.out.result(res, () => [...res.steps, '', res.event ? `Triggered: ${eventLine(res.event)}` : 'Triggered, but the event is not listed (yet)'].join('\n'));
  }
}
