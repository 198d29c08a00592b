import { Args } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { balanceFields } from '../../src/cli/wallets.js';

export default class WalletsBalance extends BaseCommand<typeof WalletsBalance> {
  static override summary = "Show a wallet's balance and available amount (integer minor units)";
  static override examples = ['<%= config.bin %> wallets balance wal_123'];
  static override args = { id: Args.string({ description: 'wallet id', required: true }) };

  async run(): Promise<void> {
    const balance = await this.client().wallets.balance(this.args.id);
    this.out.result(balance, () => balanceFields(balance));
  }
}
