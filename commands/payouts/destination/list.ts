import { BaseCommand } from '../../../src/cli/base-command.js';
import { destinationTable, listDestinations } from '../../../src/cli/rails.js';

export default class PayoutsDestinationList extends BaseCommand<typeof PayoutsDestinationList> {
  static override summary = 'List your payout destinations and when each becomes usable';
  static override examples = ['<%= config.bin %> payouts destination list'];

  async run(): Promise<void> {
    const destinations = await listDestinations(this.client());
    this.out.result({ destinations }, () => destinationTable(destinations));
  }
}
