import { Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { receiptPageText } from '../../src/cli/receipts.js';

export default class ReceiptsList extends BaseCommand<typeof ReceiptsList> {
  static override summary = 'List receipts newest first: a workspace key its purchases, a provider key its sales';
  static override description = 'A full page ends with nextCursor; pass it as --after for the next page.';
  static override examples = ['<%= config.bin %> receipts list', '<%= config.bin %> receipts list --limit 20 --after rcp_123'];
  static override flags = {
    limit: Flags.integer({ description: 'page size, 1 to 200 (default 50)', min: 1, max: 200 }),
    after: Flags.string({ description: 'the nextCursor of the previous page (a receipt id)' }),
  };

  async run(): Promise<void> {
    const page = await this.client().receipts.list({
      ...(this.flags.limit !== undefined ? { limit: this.flags.limit } : {}),
      ...(this.flags.after !== undefined ? { after: this.flags.after } : {}),
    });
    this.out.result(page, () => receiptPageText(page, this.flags.limit));
  }
}
