import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { breakerFields } from '../../src/cli/breaker.js';

export default class WalletsBreaker extends BaseCommand<typeof WalletsBreaker> {
  static override summary = "Show the breaker for a wallet and a seller: three seller errors in a row pause it";
  static override examples = ['<%= config.bin %> wallets breaker wal_123 --provider prv_456'];
  static override args = { id: Args.string({ description: 'wallet id', required: true }) };
  static override flags = { provider: Flags.string({ description: 'provider id', required: true }) };

  async run(): Promise<void> {
    const breaker = await this.client().wallets.breaker(this.args.id, this.flags.provider);
    this.out.result(breaker, () => breakerFields(breaker));
  }
}
