import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { askText } from '../../src/cli/prompts.js';
import { balanceFields, fundWallet } from '../../src/cli/wallets.js';

export default class WalletsFund extends BaseCommand<typeof WalletsFund> {
  static override summary = 'Credit a wallet instantly (sandbox gateways only)';
  static override description =
    'Amounts are integer minor units: --amount 150 is 1.50 USD. "1.50" is refused, never rounded. A production gateway answers 501 NOT_SUPPORTED.';
  static override examples = ['<%= config.bin %> wallets fund wal_123 --amount 1000'];
  static override args = { id: Args.string({ description: 'wallet id', required: true }) };
  static override flags = {
    amount: Flags.string({ description: 'integer minor units, e.g. 150 for 1.50' }),
    rail: Flags.option({ options: ['bank_transfer', 'ach', 'usdc_base', 'card'] as const, description: 'simulated rail the credit arrives on' })(),
  };

  async run(): Promise<void> {
    const amount = await askText({ flag: '--amount', message: 'Amount in integer minor units (150 = 1.50)', value: this.flags.amount });
    const res = await fundWallet(this.client(), this.args.id, amount, this.flags.rail);
    this.out.result(res, () => `Credited ${res.entry.amountMinor} to ${this.args.id}.\n${balanceFields(res.balance)}`);
  }
}
