import { BaseCommand } from '../src/cli/base-command.js';
import { whoamiText } from '../src/cli/account.js';

export default class Whoami extends BaseCommand<typeof Whoami> {
  static override summary = 'Show the tenant and key the CLI is using';
  static override examples = ['<%= config.bin %> whoami', '<%= config.bin %> whoami --profile acme --json'];

  async run(): Promise<void> {
    const me = await this.client().auth.whoami();
    const conn = this.connection();
    this.out.result({ ...me, baseUrl: conn.baseUrl, profile: conn.sources.apiKey === 'profile' ? conn.profile : null }, () => whoamiText(me, conn));
  }
}
