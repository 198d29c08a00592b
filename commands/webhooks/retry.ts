import { Args } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { deliveryTable } from '../../src/cli/webhooks.js';

export default class WebhooksRetry extends BaseCommand<typeof WebhooksRetry> {
  static override summary = "Send a delivery's event again (a new delivery, queued behind the endpoint's others)";
  static override examples = ['<%= config.bin %> webhooks retry whe_123 whd_456'];
  static override args = {
    id: Args.string({ description: 'endpoint id (whe_…)', required: true }),
    deliveryId: Args.string({ description: 'delivery id (whd_…, from webhooks deliveries)', required: true }),
  };

  async run(): Promise<void> {
    const res = await this.client().webhooks.retry(this.args.id, this.args.deliveryId);
    this.out.result(res, () => `Queued.\n${deliveryTable([res.delivery])}`);
  }
}
