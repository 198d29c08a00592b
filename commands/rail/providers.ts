import { BaseCommand } from '../../src/cli/base-command.js';
import { providerTable } from '../../src/cli/rails.js';

export default class RailProviders extends BaseCommand<typeof RailProviders> {
  static override summary = 'List the rail providers of the gateway (processors, chains, banks) with their health, and the sanctions screening\'s';
  static override examples = ['<%= config.bin %> rail providers'];

  async run(): Promise<void> {
    const res = await this.client().rail.providers();
    const screening = res.screening ? `\nSanctions screening: ${res.screening.status}${res.screening.detail ? ` (${res.screening.detail})` : ''}` : '';
    this.out.result(res, () => `${res.sandbox ? 'Sandbox gateway: simulated rails, no real money.\n' : ''}${providerTable(res.providers)}${screening}`);
  }
}
