import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../../src/cli/base-command.js';
import { destinationTable, setDestination } from '../../../src/cli/rails.js';

export default class PayoutsDestinationSet extends BaseCommand<typeof PayoutsDestinationSet> {
  static override summary = 'Register where payouts go: an ext_ bank account reference or a 0x USDC address';
  static override description =
    'The first destination of an asset is usable at once. A change freezes payouts on that asset\'s rails for 24 hours and raises a payout_destination.changed event. The same address in another letter case is not a change. Bank account numbers are never accepted: link the account with your bank provider and register its ext_ reference.';
  static override examples = [
    '<%= config.bin %> payouts destination set ext_acme_operating --as provider',
    '<%= config.bin %> payouts destination set 0x52908400098527886E0F7030069857D2E4169EE7 --as provider',
  ];
  static override args = { destination: Args.string({ description: 'ext_… (USD bank rails) or 0x… (USDC on Base)', required: true }) };
  static override flags = {
    asset: Flags.option({ options: ['USD', 'USDC'] as const, description: 'default: USD for ext_…, USDC for 0x…' })(),
    chain: Flags.option({ options: ['base'] as const, description: 'for USDC [default: base]' })(),
  };

  async run(): Promise<void> {
    const res = await setDestination(this.client(), this.args.destination, { asset: this.flags.asset, chain: this.flags.chain });
    this.out.result(res, () => {
      const d = res.destination;
      const note = !res.changed ? 'Unchanged: that destination is already registered.' : d.usable ? 'Registered; usable now.' : `Changed; payouts on ${d.rails.join(' and ')} resume at ${d.usableAt}.`;
      return `${note}\n${destinationTable([d])}`;
    });
  }
}
