import { Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { transactionTable } from '../../src/cli/rails.js';

export default class RailTransactions extends BaseCommand<typeof RailTransactions> {
  static override summary = 'List every top-up, deposit and payout on your wallets, newest first';
  static override description = 'Each with its state, the amount on the rail (USD cents or USDC base units) and the USD it credited (+) or debited (-).';
  static override examples = ['<%= config.bin %> rail transactions', '<%= config.bin %> rail transactions --kind deposit --wallet wal_123'];
  static override flags = {
    kind: Flags.option({ options: ['topup', 'deposit', 'payout'] as const, description: 'only this kind' })(),
    wallet: Flags.string({ description: 'only this wallet' }),
    limit: Flags.integer({ description: 'page size, 1 to 200 [default: 50]', min: 1, max: 200 }),
    after: Flags.string({ description: 'the nextCursor of the previous page' }),
  };

  async run(): Promise<void> {
    const page = await this.client().rail.transactions({
      ...(this.flags.kind ? { kind: this.flags.kind } : {}), ...(this.flags.wallet ? { walletId: this.flags.wallet } : {}),
      ...(this.flags.limit ? { limit: this.flags.limit } : {}), ...(this.flags.after ? { after: this.flags.after } : {}),
    });
    this.out.result(page, () => transactionTable(page.transactions) + (page.nextCursor ? `\nmore: --after ${page.nextCursor}` : ''));
  }
}
