import { Args } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { walletFields } from '../../src/cli/wallets.js';

export default class WalletsShow extends BaseCommand<typeof WalletsShow> {
  static override summary = 'Show one wallet with its balance';
  static override examples = ['<%= config.bin %> wallets show wal_123'];
  static override args = { id: Args.string({ description: 'wallet id', required: true }) };

  async run(): Promise<void> {
    const wallet = await this.client().wallets.get(this.args.id);
    this.out.result({ wallet }, () => walletFields(wallet));
  }
}
