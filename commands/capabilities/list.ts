import { BaseCommand } from '../../src/cli/base-command.js';
import { capabilityTable } from '../../src/cli/capabilities.js';

export default class CapabilitiesList extends BaseCommand<typeof CapabilitiesList> {
  static override summary = "List your own capabilities, deprecated ones included (provider key)";
  static override examples = ['<%= config.bin %> capabilities list', '<%= config.bin %> capabilities list --json'];

  async run(): Promise<void> {
    const capabilities = await this.client().capabilities.list();
    this.out.result({ capabilities }, () => capabilityTable(capabilities));
  }
}
