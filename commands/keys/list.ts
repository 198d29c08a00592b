import { BaseCommand } from '../../src/cli/base-command.js';
import { keyTable } from '../../src/cli/keys.js';

export default class KeysList extends BaseCommand<typeof KeysList> {
  static override summary = "List this tenant's API keys (revoked ones included; never the keys themselves)";
  static override examples = ['<%= config.bin %> keys list', '<%= config.bin %> keys list --json'];

  async run(): Promise<void> {
    const res = await this.client().keys.list();
    this.out.result(res, () => keyTable(res.keys));
  }
}
