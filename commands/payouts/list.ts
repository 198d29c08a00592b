import { Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { listPayouts, payoutTable } from '../../src/cli/rails.js';

export default class PayoutsList extends BaseCommand<typeof PayoutsList> {
  static override summary = 'List your payouts, newest first';
  static override examples = ['<%= config.bin %> payouts list', '<%= config.bin %> payouts list --limit 10'];
  static override flags = {
    limit: Flags.integer({ description: 'page size, 1 to 200 [default: 50]', min: 1, max: 200 }),
    after: Flags.string({ description: 'the nextCursor of the previous page' }),
  };

  async run(): Promise<void> {
    const page = await listPayouts(this.client(), { limit: this.flags.limit, after: this.flags.after });
    this.out.result(page, () => payoutTable(page.payouts) + (page.nextCursor ? `\nmore: --after ${page.nextCursor}` : ''));
  }
}
