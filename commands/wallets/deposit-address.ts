import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { addressFields, depositAddress } from '../../src/cli/rails.js';

export default class WalletsDepositAddress extends BaseCommand<typeof WalletsDepositAddress> {
  static override summary = "Show the wallet's USDC deposit address on Base (made on first use)";
  static override description =
    'USDC sent to it is credited in USD at the USDC price; while USDC is outside ±0.5% of 1 USD a deposit is held and credited once the price is back. Asking again gives the same address.';
  static override examples = ['<%= config.bin %> wallets deposit-address wal_123'];
  static override args = { id: Args.string({ description: 'wallet id', required: true }) };
  static override flags = { provider: Flags.string({ description: 'treasury provider id, if several provide deposit addresses' }) };

  async run(): Promise<void> {
    const address = await depositAddress(this.client(), this.args.id, this.flags.provider);
    this.out.result({ address }, () => addressFields(address));
  }
}
