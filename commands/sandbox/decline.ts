import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { sandboxDecline, transactionTable } from '../../src/cli/rails.js';

export default class SandboxDecline extends BaseCommand<typeof SandboxDecline> {
  static override summary = 'Sandbox: the processor declines a top-up (nothing is credited)';
  static override examples = ['<%= config.bin %> sandbox decline top_123 --reason insufficient_funds'];
  static override args = { id: Args.string({ description: 'top-up id (top_…)', required: true }) };
  static override flags = { reason: Flags.string({ description: 'decline reason [default: card_declined]' }) };

  async run(): Promise<void> {
    const transaction = await sandboxDecline(this.client(), this.args.id, this.flags.reason);
    this.out.result({ transaction }, () => transactionTable([transaction]));
  }
}
