import { BaseCommand } from '../../src/cli/base-command.js';
import { policyTable } from '../../src/cli/policies.js';

export default class PoliciesList extends BaseCommand<typeof PoliciesList> {
  static override summary = "List the workspace's policies, disabled ones included";
  static override examples = ['<%= config.bin %> policies list', '<%= config.bin %> policies list --json'];

  async run(): Promise<void> {
    const res = await this.client().policies.list();
    this.out.result(res, () => policyTable(res.policies));
  }
}
