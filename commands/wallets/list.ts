import { BaseCommand } from '../../src/cli/base-command.js';
import { walletTable } from '../../src/cli/wallets.js';

export default class WalletsList extends BaseCommand<typeof WalletsList> {
  static override summary = "List this tenant's wallets (a provider key sees its settlement wallet)";
  static override examples = ['<%= config.bin %> wallets list', '<%= config.bin %> wallets list --json'];

  async run(): Promise<void> {
    const wallets = await this.client().wallets.list();
    this.out.result({ wallets }, () => walletTable(wallets));
  }
}
