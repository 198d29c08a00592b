import { Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { evaluationText, testPolicies } from '../../src/cli/policies.js';
import { askText } from '../../src/cli/prompts.js';

export default class PoliciesTest extends BaseCommand<typeof PoliciesTest> {
  static override summary = 'Dry run: which rule would decide a purchase, and how (nothing is bought or held)';
  static override description = [
    "Evaluates the workspace's enabled policies for a purchase by --wallet of --capability, at --price (integer",
    "minor units; default: the capability's current price), and prints the decision, the rule that made it and",
    'each policy consulted on the way.',
  ].join('\n');
  static override examples = [
    '<%= config.bin %> policies test --wallet wal_123 --capability cap_456',
    '<%= config.bin %> policies test --wallet wal_123 --capability cap_456 --price 2500 --json',
  ];
  static override flags = {
    wallet: Flags.string({ description: 'the agent wallet that would pay' }),
    capability: Flags.string({ description: 'the capability it would buy' }),
    price: Flags.string({ description: "integer minor units, e.g. 150 for 1.50 [default: the capability's price]" }),
  };

  async run(): Promise<void> {
    const walletId = await askText({ flag: '--wallet', message: 'Agent wallet id', value: this.flags.wallet });
    const capabilityId = await askText({ flag: '--capability', message: 'Capability id', value: this.flags.capability });
    const res = await testPolicies(this.client(), { walletId, capabilityId, price: this.flags.price });
    this.out.result(res, () => evaluationText(res));
  }
}
