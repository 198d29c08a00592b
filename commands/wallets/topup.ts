import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { askText } from '../../src/cli/prompts.js';
import { intentFields, topUp } from '../../src/cli/rails.js';

export default class WalletsTopup extends BaseCommand<typeof WalletsTopup> {
  static override summary = 'Start a top-up: the wallet is credited when the processor confirms';
  static override description =
    'Creates a payment intent at a processor and prints where to pay. Nothing is credited until the processor confirms (on a sandbox gateway: agentpay sandbox confirm TOP_ID). Amounts are integer minor units: --amount 150 is 1.50 USD. 501 NOT_SUPPORTED where no rail provider takes top-ups.';
  static override examples = ['<%= config.bin %> wallets topup wal_123 --amount 5000', '<%= config.bin %> sandbox confirm top_456'];
  static override args = { id: Args.string({ description: 'wallet id', required: true }) };
  static override flags = {
    amount: Flags.string({ description: 'integer minor units, e.g. 150 for 1.50' }),
    asset: Flags.option({ options: ['USD', 'USDC'] as const, description: 'currency of the top-up [default: USD]' })(),
    provider: Flags.string({ description: 'treasury provider id, if several take top-ups (agentpay rail providers)' }),
  };

  async run(): Promise<void> {
    const amount = await askText({ flag: '--amount', message: 'Amount in integer minor units (150 = 1.50)', value: this.flags.amount });
    const intent = await topUp(this.client(), this.args.id, { amount, asset: this.flags.asset, provider: this.flags.provider });
    this.out.result({ intent }, () => intentFields(intent));
  }
}
