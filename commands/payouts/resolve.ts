import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { RESOLVE_OUTCOMES, resolvePayout } from '../../src/cli/payouts.js';
import { payoutFields } from '../../src/cli/rails.js';

export default class PayoutsResolve extends BaseCommand<typeof PayoutsResolve> {
  static override summary = 'Close out a submitted payout its rail never resolved (operator key)';
  static override description =
    'For a payout stuck in submitted, after checking with the rail out of band. paid: the money left; the payout becomes confirmed and the ledger keeps its debit. failed: it did not; the payout becomes failed and the provider is re-credited. The reason is recorded on the payout and in a payout.resolved event. Refused (CONFLICT) for a payout not in submitted, and (RAIL_DISAGREES) when the rail\'s own record says otherwise: failed for a payout the rail paid, paid for one it returned.';
  static override examples = [
    '<%= config.bin %> payouts resolve pay_123 --outcome paid --reason "bank confirmed wire 0xA1 on 2026-03-05" --as operator',
    '<%= config.bin %> payouts resolve pay_123 --outcome failed --reason "bank has no record of it (ticket 4411)" --as operator',
  ];
  static override args = { id: Args.string({ description: 'payout id (pay_…)', required: true }) };
  static override flags = {
    outcome: Flags.option({ options: RESOLVE_OUTCOMES, description: 'paid or failed (asked for on a terminal)' })(),
    reason: Flags.string({ description: 'what the rail told you; recorded on the payout (asked for on a terminal)' }),
  };

  async run(): Promise<void> {
    const payout = await resolvePayout(this.client(), this.args.id, { outcome: this.flags.outcome, reason: this.flags.reason });
    this.out.result({ payout }, () => payoutFields(payout));
  }
}
