import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';

export default class WalletsResumeProvider extends BaseCommand<typeof WalletsResumeProvider> {
  static override summary = "Resume a seller the breaker paused for this wallet, and reset its failure count";
  static override examples = ['<%= config.bin %> wallets resume-provider wal_123 --provider prv_456'];
  static override args = { id: Args.string({ description: 'wallet id', required: true }) };
  static override flags = { provider: Flags.string({ description: 'provider id', required: true }) };

  async run(): Promise<void> {
    const res = await this.client().wallets.resumeProvider(this.args.id, this.flags.provider);
    this.out.result(res, () => `Resumed ${this.flags.provider} for ${this.args.id}: payments to it are allowed again.`);
  }
}
