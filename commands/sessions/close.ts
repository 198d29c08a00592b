import { Args } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { closedSessionText, closeSession } from '../../src/cli/sessions.js';

export default class SessionsClose extends BaseCommand<typeof SessionsClose> {
  static override summary = "Close a payment session: the seller's key releases the rest at once, the buyer's workspace key ends it early";
  static override description = [
    'With a provider key (the seller): claim the highest voucher first (a closed session takes no claim); the rest of the cap goes back to the buyer now.',
    "With a workspace key (the buyer's): no voucher counts from now on; the seller's claims are taken for one more claim window (an hour), then the rest goes back to the wallet.",
  ].join('\n');
  static override examples = ['<%= config.bin %> sessions close ses_123', '<%= config.bin %> sessions close ses_123 --json'];
  static override args = { id: Args.string({ description: 'session id (ses_…)', required: true }) };

  async run(): Promise<void> {
    const closed = await closeSession(this.client(), this.args.id);
    this.out.result(closed, () => closedSessionText(closed));
  }
}
