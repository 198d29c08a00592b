import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { payoutFields, sandboxReturn } from '../../src/cli/rails.js';

export default class SandboxReturn extends BaseCommand<typeof SandboxReturn> {
  static override summary = 'Sandbox: the rail returns a submitted payout (the wallet is re-credited)';
  static override examples = ['<%= config.bin %> sandbox return pay_123 --reason account_closed --as provider'];
  static override args = { id: Args.string({ description: 'payout id (pay_…)', required: true }) };
  static override flags = { reason: Flags.string({ description: 'return reason [default: account_closed]' }) };

  async run(): Promise<void> {
    const payout = await sandboxReturn(this.client(), this.args.id, this.flags.reason);
    this.out.result({ payout }, () => payoutFields(payout));
  }
}
