import { Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { askChoice, askText } from '../../src/cli/prompts.js';
import { RAIL_NAMES, createPayout, payoutFields } from '../../src/cli/rails.js';

export default class PayoutsCreate extends BaseCommand<typeof PayoutsCreate> {
  static override summary = 'Pay out from your settlement wallet to your registered destination';
  static override description =
    'The wallet is debited at once and the payout is submitted; it is confirmed minutes later on usdc_base, in 1 to 2 business days on bank rails, or returned (and re-credited). Pass the same --idempotency-key to retry safely: the same key and request never pay twice. Without one a new key is made for this run; if no answer comes back (network error, gateway failure), the error says the payout may have been made and names the key to retry with.';
  static override examples = [
    '<%= config.bin %> payouts create --amount 5000 --rail ach --as provider',
    '<%= config.bin %> payouts create --amount 5000 --rail usdc_base --idempotency-key march-payout --as provider',
  ];
  static override flags = {
    amount: Flags.string({ description: 'integer USD minor units, e.g. 5000 for 50.00' }),
    rail: Flags.option({ options: RAIL_NAMES, description: 'bank_transfer, ach or usdc_base' })(),
    wallet: Flags.string({ description: 'settlement wallet id [default: the key\'s]' }),
    destination: Flags.string({ description: 'must be the registered destination [default: it]' }),
    provider: Flags.string({ description: 'treasury provider id, if two serve the rail' }),
    'idempotency-key': Flags.string({ description: 'retry key [default: a new random one, named in the error when the outcome is unknown]' }),
  };

  async run(): Promise<void> {
    const amount = await askText({ flag: '--amount', message: 'Amount in integer USD minor units (150 = 1.50)', value: this.flags.amount });
    const rail = await askChoice({ flag: '--rail', message: 'Rail', value: this.flags.rail, choices: RAIL_NAMES });
    const payout = await createPayout(this.client(), {
      amount, rail, wallet: this.flags.wallet, destination: this.flags.destination, provider: this.flags.provider, idempotencyKey: this.flags['idempotency-key'],
    });
    this.out.result({ payout }, () => payoutFields(payout));
  }
}
