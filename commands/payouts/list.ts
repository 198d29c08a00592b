import { Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { PAYOUT_STATUSES, listPayoutsForKey, payoutTableEveryProvider } from '../../src/cli/payouts.js';
import { payoutTable } from '../../src/cli/rails.js';

export default class PayoutsList extends BaseCommand<typeof PayoutsList> {
  static override summary = 'List your payouts, newest first (the operator key: every provider\'s)';
  static override description =
    'A provider key lists its own payouts. The operator key lists every provider\'s, each with its provider: --stuck finds the payouts submitted more than 24 hours ago (by the gateway\'s clock) that their rail has not settled, to check with the rail and close out with agentpay payouts resolve.';
  static override examples = [
    '<%= config.bin %> payouts list',
    '<%= config.bin %> payouts list --limit 10',
    '<%= config.bin %> payouts list --stuck --as operator',
    '<%= config.bin %> payouts list --status submitted --submitted-before 2026-11-20T00:00:00Z --as operator',
  ];
  static override flags = {
    limit: Flags.integer({ description: 'page size, 1 to 200 [default: 50]', min: 1, max: 200 }),
    after: Flags.string({ description: 'the nextCursor of the previous page' }),
    status: Flags.option({ options: PAYOUT_STATUSES, description: 'only payouts in this status' })(),
    'submitted-before': Flags.string({ description: 'only payouts submitted before this ISO 8601 time, e.g. 2026-11-20T00:00:00Z' }),
    stuck: Flags.boolean({ description: 'only payouts still submitted after more than 24 hours: --status submitted --submitted-before <a day ago>', exclusive: ['status', 'submitted-before'] }),
  };

  async run(): Promise<void> {
    const { page, everyProvider, query } = await listPayoutsForKey(this.client(), {
      limit: this.flags.limit, after: this.flags.after, status: this.flags.status, submittedBefore: this.flags['submitted-before'], stuck: this.flags.stuck,
    });
    const more = page.nextCursor ? `\nmore: --after ${page.nextCursor}` : '';
    const empty = this.flags.stuck ? `(no payouts stuck: none submitted before ${query.submittedBefore} is still submitted)` : '(no payouts)';
    this.out.result(page, () => (everyProvider ? payoutTableEveryProvider(page.payouts, empty) : payoutTable(page.payouts)) + more);
    if (!this.out.json && everyProvider && query.status === 'submitted' && page.payouts.length > 0) {
      this.out.note('Check each with its rail, then: agentpay payouts resolve ID --outcome paid|failed --reason "..." --as operator');
    }
  }
}
