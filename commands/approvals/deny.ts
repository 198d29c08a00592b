import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { approvalFields, decide, resolvedByName } from '../../src/cli/approvals.js';

export default class ApprovalsDeny extends BaseCommand<typeof ApprovalsDeny> {
  static override summary = "Deny a held purchase: the agent's purchase stays refused";
  static override examples = ['<%= config.bin %> approvals deny apr_123', '<%= config.bin %> approvals deny apr_123 --resolved-by alice --json'];
  static override args = { id: Args.string({ description: 'approval id (apr_…)', required: true }) };
  static override flags = {
    'resolved-by': Flags.string({ description: 'who decides, recorded with the decision [default: the OS user name]' }),
  };

  async run(): Promise<void> {
    const approval = await decide(this.client(), this.args.id, 'deny', resolvedByName(this.flags['resolved-by']));
    this.out.result({ approval }, () => approvalFields(approval));
  }
}
