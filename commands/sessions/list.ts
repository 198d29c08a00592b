import { Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { sessionPageText } from '../../src/cli/sessions.js';

export default class SessionsList extends BaseCommand<typeof SessionsList> {
  static override summary = "List payment sessions newest first: a workspace key its wallets' sessions, a provider key its sales'";
  static override description = 'A full page ends with nextCursor; pass it as --after for the next page.';
  static override examples = [
    '<%= config.bin %> sessions list',
    '<%= config.bin %> sessions list --status open --wallet wal_123',
    '<%= config.bin %> sessions list --seller prv_123 --limit 20 --json',
  ];
  static override flags = {
    status: Flags.string({ description: 'only sessions with this status', options: ['open', 'closed', 'expired'] }),
    wallet: Flags.string({ description: "only the sessions paid by this wallet (the buyer's, wal_…)" }),
    seller: Flags.string({ description: "only the sessions of this seller (its provider id, prv_…)" }),
    limit: Flags.integer({ description: 'page size, 1 to 100 (default 50)', min: 1, max: 100 }),
    after: Flags.string({ description: 'the nextCursor of the previous page (a session id)' }),
  };

  async run(): Promise<void> {
    const f = this.flags;
    const page = await this.client().sessions.list({
      ...(f.status !== undefined ? { status: f.status as 'open' | 'closed' | 'expired' } : {}),
      ...(f.wallet !== undefined ? { walletId: f.wallet } : {}),
      ...(f.seller !== undefined ? { sellerId: f.seller } : {}),
      ...(f.limit !== undefined ? { limit: f.limit } : {}),
      ...(f.after !== undefined ? { after: f.after } : {}),
    });
    this.out.result(page, () => sessionPageText(page, f.limit));
  }
}
