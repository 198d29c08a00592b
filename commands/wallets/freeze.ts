import { Args } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { walletFields } from '../../src/cli/wallets.js';

export default class WalletsFreeze extends BaseCommand<typeof WalletsFreeze> {
  static override summary = 'Freeze a wallet: every outgoing payment is refused with WALLET_FROZEN';
  static override examples = ['<%= config.bin %> wallets freeze wal_123'];
  static override args = { id: Args.string({ description: 'wallet id', required: true }) };

  async run(): Promise<void> {
    const wallet = await this.client().wallets.freeze(this.args.id);
    this.out.result({ wallet }, () => walletFields(wallet));
  }
}
