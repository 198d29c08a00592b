import { BaseCommand } from '../../src/cli/base-command.js';
import { configText, showConfig } from '../../src/cli/config.js';

export default class Config extends BaseCommand<typeof Config> {
  static override summary = 'Show the saved profiles (keys masked) and the current one';
  static override examples = ['<%= config.bin %> config', '<%= config.bin %> config use acme'];

  async run(): Promise<void> {
    const view = showConfig();
    this.out.result(view, () => configText(view));
  }
}
