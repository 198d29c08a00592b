import { Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { eventTable, eventTypeFlag } from '../../src/cli/events.js';

export default class EventsList extends BaseCommand<typeof EventsList> {
  static override summary = 'List your alerts, newest first: held purchases, paused sellers, payout and deposit changes';
  static override description = [
    'The events the gateway recorded for the key in use (docs/api/rails.md#events), written in the same transaction',
    'as what they announce. To see new ones as they come, use agentpay events tail.',
  ].join('\n');
  static override examples = [
    '<%= config.bin %> events list --as provider',
    '<%= config.bin %> events list --type payout.returned --limit 10 --json',
  ];
  static override flags = {
    type: eventTypeFlag(),
    limit: Flags.integer({ description: 'page size, 1 to 200 [default: 50]', min: 1, max: 200 }),
    after: Flags.string({ description: 'the nextCursor of the previous page' }),
  };

  async run(): Promise<void> {
    const page = await this.client().rail.events({
      ...(this.flags.type ? { type: this.flags.type } : {}),
      ...(this.flags.limit ? { limit: this.flags.limit } : {}),
      ...(this.flags.after ? { after: this.flags.after } : {}),
    });
    this.out.result(page, () => eventTable(page.events) + (page.nextCursor ? `\nmore: --after ${page.nextCursor}` : ''));
  }
}
