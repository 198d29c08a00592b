import { BaseCommand } from '../../src/cli/base-command.js';
import { endpointTable } from '../../src/cli/webhooks.js';

export default class WebhooksList extends BaseCommand<typeof WebhooksList> {
  static override summary = 'List your webhook endpoints (never their secrets)';
  static override examples = ['<%= config.bin %> webhooks list', '<%= config.bin %> webhooks list --json'];

  async run(): Promise<void> {
    const res = await this.client().webhooks.list();
    this.out.result(res, () => endpointTable(res.endpoints));
  }
}
