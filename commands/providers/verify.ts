import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { DECISIONS, decideVerification, providerFields } from '../../src/cli/providers.js';

export default class ProvidersVerify extends BaseCommand<typeof ProvidersVerify> {
  static override summary = "Approve or deny a provider's verification (operator key)";
  static override description = 'An approved provider becomes verified and active; its capabilities appear in discovery.';
  static override examples = [
    '<%= config.bin %> providers verify prv_123 --decision approved --as operator',
    '<%= config.bin %> providers verify prv_123 --decision denied --reason "website does not match"',
  ];
  static override args = { id: Args.string({ description: 'provider id', required: true }) };
  static override flags = {
    decision: Flags.option({ options: DECISIONS, description: 'approved or denied (asked for on a terminal)' })(),
    reason: Flags.string({ description: 'why; shown to the provider' }),
  };

  async run(): Promise<void> {
    const provider = await decideVerification(this.client(), this.args.id, { decision: this.flags.decision, reason: this.flags.reason });
    this.out.result({ provider }, () => providerFields(provider));
  }
}
