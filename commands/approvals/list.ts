import { Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { APPROVAL_STATUSES, approvalTable } from '../../src/cli/approvals.js';

export default class ApprovalsList extends BaseCommand<typeof ApprovalsList> {
  static override summary = 'List approval requests, newest first';
  static override examples = ['<%= config.bin %> approvals list', '<%= config.bin %> approvals list --status pending --json'];
  static override flags = {
    status: Flags.option({ options: APPROVAL_STATUSES, description: 'only approvals with this status [default: all]' })(),
  };

  async run(): Promise<void> {
    const res = await this.client().approvals.list(this.flags.status ? { status: this.flags.status } : {});
    this.out.result(res, () => approvalTable(res.approvals));
  }
}
