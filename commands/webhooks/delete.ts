import { Args } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { endpointFields } from '../../src/cli/webhooks.js';

export default class WebhooksDelete extends BaseCommand<typeof WebhooksDelete> {
  static override summary = 'Delete a webhook endpoint; what it had still to send is dropped';
  static override examples = ['<%= config.bin %> webhooks delete whe_123'];
  static override args = { id: Args.string({ description: 'endpoint id (whe_…, from webhooks list)', required: true }) };

  async run(): Promise<void> {
    const res = await this.client().webhooks.delete(this.args.id);
    this.out.result(res, () => `Deleted.\n${endpointFields(res.endpoint)}`);
  }
}
