import { Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { approvalTable, decide, pendingApprovals, resolvedByName } from '../../src/cli/approvals.js';
import { describeError } from '../../src/cli/errors/index.js';
import { canPrompt } from '../../src/cli/prompts.js';

export default class Approvals extends BaseCommand<typeof Approvals> {
  static override summary = 'Watch pending approvals live and approve or deny them';
  static override description = [
    'A live screen of the purchases a policy rule is holding for a person. It refreshes twice a second; move with',
    '↑/↓ (or j/k), press a to approve or d to deny, confirm with y, and q to quit. Each decision is recorded with',
    '--resolved-by (default: your OS user name). An approval covers one later purchase by that wallet of that',
    'capability, up to the approved amount. Without a terminal, or with --json, it prints the pending list once.',
  ].join('\n');
  static override examples = [
    '<%= config.bin %> approvals',
    '<%= config.bin %> approvals --resolved-by alice',
    '<%= config.bin %> approvals --json',
  ];
  static override flags = {
    'resolved-by': Flags.string({ description: 'who decides, recorded with each decision [default: the OS user name]' }),
  };

  async run(): Promise<void> {
    const client = this.client();
    // loaded before the screen starts, so a bad key or an unreachable gateway is reported as usual
    const pending = await pendingApprovals(client);
    if (this.out.json || !canPrompt()) {
      this.out.result({ approvals: pending }, () => approvalTable(pending, '(no pending approvals)'));
      return;
    }
    const resolvedBy = resolvedByName(this.flags['resolved-by']);
    const [{ renderLive }, { ApprovalsScreen }] = await Promise.all([
      import('../../src/cli/ui/render.js'),
      import('../../src/cli/ui/approvals-screen.js'),
    ]);
    await renderLive(ApprovalsScreen, {
      initial: pending,
      load: () => pendingApprovals(client),
      approve: (id: string, o: { resolvedBy: string }) => decide(client, id, 'approve', o.resolvedBy),
      deny: (id: string, o: { resolvedBy: string }) => decide(client, id, 'deny', o.resolvedBy),
      resolvedBy,
      errorText: (err: unknown) => {
        const r = describeError(err, { baseUrl: this.connection().baseUrl });
        return `${r.code}: ${r.message}${r.tryNext ? ` (try: ${r.tryNext})` : ''}`;
      },
    });
  }
}
