import { Args } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { payoutFields, sandboxConfirm, transactionTable } from '../../src/cli/rails.js';

export default class SandboxConfirm extends BaseCommand<typeof SandboxConfirm> {
  static override summary = 'Sandbox: confirm a top-up (the processor) or a payout (its rail) now';
  static override description = 'A top-up is confirmed by the sandbox processor\'s signed webhook, which credits the wallet once; a payout confirms without waiting for its rail\'s time.';
  static override examples = ['<%= config.bin %> sandbox confirm top_123', '<%= config.bin %> sandbox confirm pay_456 --as provider'];
  static override args = { id: Args.string({ description: 'top-up (top_…) or payout (pay_…) id', required: true }) };

  async run(): Promise<void> {
    const res = await sandboxConfirm(this.client(), this.args.id);
    this.out.result(res, () => (res.payout ? payoutFields(res.payout) : transactionTable([res.transaction!])));
  }
}
