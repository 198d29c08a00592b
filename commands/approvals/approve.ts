import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { approvalFields, decide, resolvedByName } from '../../src/cli/approvals.js';

export default class ApprovalsApprove extends BaseCommand<typeof ApprovalsApprove> {
  static override summary = "Approve a held purchase: it covers one later purchase by that wallet of that capability, up to the amount";
  static override examples = ['<%= config.bin %> approvals approve apr_123', '<%= config.bin %> approvals approve apr_123 --resolved-by alice --json'];
  static override args = { id: Args.string({ description: 'approval id (apr_…)', required: true }) };
  static override flags = {
    'resolved-by': Flags.string({ description: 'who decides, recorded with the decision [default: the OS user name]' }),
  };

  async run(): Promise<void> {
    const approval = await decide(this.client(), this.args.id, 'approve', resolvedByName(this.flags['resolved-by']));
    this.out.result({ approval }, () => approvalFields(approval));
  }
}
