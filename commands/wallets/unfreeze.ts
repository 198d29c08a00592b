import { Args } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { walletFields } from '../../src/cli/wallets.js';

export default class WalletsUnfreeze extends BaseCommand<typeof WalletsUnfreeze> {
  static override summary = 'Unfreeze a wallet';
  static override examples = ['<%= config.bin %> wallets unfreeze wal_123'];
  static override args = { id: Args.string({ description: 'wallet id', required: true }) };

  async run(): Promise<void> {
    const wallet = await this.client().wallets.unfreeze(this.args.id);
    this.out.result({ wallet }, () => walletFields(wallet));
  }
}
