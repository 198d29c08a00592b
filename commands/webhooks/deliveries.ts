import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { deliveryTable } from '../../src/cli/webhooks.js';

export default class WebhooksDeliveries extends BaseCommand<typeof WebhooksDeliveries> {
  static override summary = "An endpoint's deliveries, newest first: state, attempts, the last answer, the next try";
  static override examples = [
    '<%= config.bin %> webhooks deliveries whe_123',
    '<%= config.bin %> webhooks deliveries whe_123 --limit 10 --after whd_456 --json',
  ];
  static override args = { id: Args.string({ description: 'endpoint id (whe_…)', required: true }) };
  static override flags = {
    limit: Flags.integer({ description: 'at most this many, 1 to 200', min: 1, max: 200 }),
    after: Flags.string({ description: 'the page after this delivery (a nextCursor)' }),
  };

  async run(): Promise<void> {
    const res = await this.client().webhooks.deliveries(this.args.id, {
      ...(this.flags.limit !== undefined ? { limit: this.flags.limit } : {}), ...(this.flags.after ? { after: this.flags.after } : {}),
    });
    this.out.result(res, () => deliveryTable(res.deliveries) + (res.nextCursor ? `\nmore: --after ${res.nextCursor}` : ''));
  }
}
