import { Args } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { ledgerTable } from '../../src/cli/wallets.js';

export default class WalletsLedger extends BaseCommand<typeof WalletsLedger> {
  static override summary = "List every ledger entry of a wallet, oldest first";
  static override examples = ['<%= config.bin %> wallets ledger wal_123'];
  static override args = { id: Args.string({ description: 'wallet id', required: true }) };

  async run(): Promise<void> {
    const entries = await this.client().wallets.ledger(this.args.id);
    this.out.result({ entries }, () => ledgerTable(entries));
  }
}
