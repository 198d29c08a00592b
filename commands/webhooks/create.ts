import { Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { endpointFields, parseEventTypes, parseHttpUrl } from '../../src/cli/webhooks.js';

export default class WebhooksCreate extends BaseCommand<typeof WebhooksCreate> {
  static override summary = 'Register a webhook endpoint: your events are POSTed to it, signed; prints its secret once';
  static override description = [
    'Every event you can read with agentpay events list (or only those of --events) is POSTed to --url as JSON,',
    'with an agentpay-signature header (t=…,v1=…): check it with verifyWebhookSignature from agentpay-sdk/webhooks',
    'and the secret printed here, which is shown this once. A failing endpoint is retried for at least 24 hours,',
    'and its next event waits until then. See docs/api/webhooks.md.',
  ].join('\n');
  static override examples = [
    '<%= config.bin %> webhooks create --url https://example.com/hooks/agentpay',
    '<%= config.bin %> webhooks create --url https://example.com/hooks --events approval.requested,payout.returned --description "ops" --json',
  ];
  static override flags = {
    url: Flags.string({ description: 'where deliveries are POSTed (https; http too on a sandbox gateway)', required: true }),
    events: Flags.string({ description: 'only these event types, comma-separated [default: every type]' }),
    description: Flags.string({ description: 'a note for you' }),
  };

  async run(): Promise<void> {
    const url = parseHttpUrl(this.flags.url, '--url');
    const eventTypes = this.flags.events !== undefined ? parseEventTypes(this.flags.events) : undefined;
    const res = await this.client().webhooks.create({ url, ...(eventTypes ? { eventTypes } : {}), ...(this.flags.description ? { description: this.flags.description } : {}) });
    this.out.result(res, () => `Registered.\n${endpointFields(res.endpoint, res.secret)}`);
  }
}
