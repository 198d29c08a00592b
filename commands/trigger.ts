import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../src/cli/base-command.js';
import { usageError } from '../src/cli/errors.js';
import { TRIGGERS, trigger } from '../src/cli/webhooks.js';
import { eventLine } from '../src/cli/events.js';

export default class Trigger extends BaseCommand<typeof Trigger> {
  static override summary = 'Sandbox: make an event really happen, through the API, to test your webhook endpoint or agentpay listen';
  static override description = [
    `Known: ${Object.keys(TRIGGERS).join(', ')}. payout.returned (a provider key) funds the settlement wallet with`,
    '--amount in the sandbox, pays it out by bank transfer (registering a first destination if there is none) and has',
    'the sandbox bank return it: the wallet ends up --amount richer and the event is recorded. Other types are not',
    'made yet; the error says how to cause them by hand. Needs a sandbox gateway.',
  ].join('\n');
  static override examples = ['<%= config.bin %> trigger payout.returned --as provider', '<%= config.bin %> trigger payout.returned --amount 250 --json'];
  static override args = { event: Args.string({ description: 'the event type', required: true }) };
  static override flags = { amount: Flags.string({ description: 'minor units moved (payout.returned)', default: '100' }) };

  async run(): Promise<void> {
    if (!/^[1-9][0-9]{0,17}$/.test(this.flags.amount)) {
      throw usageError(`--amount: a whole number of minor units above 0, e.g. 100; got ${JSON.stringify(this.flags.amount)}`, undefined, { flag: '--amount' });
    }
    const res = await trigger(this.client(), this.args.event, { amountMinor: this.flags.amount });
    this.out.result(res, () => [...res.steps, '', res.event ? `Triggered: ${eventLine(res.event)}` : 'Triggered, but the event is not listed (yet)'].join('\n'));
  }
}
