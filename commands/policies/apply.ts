import { Args } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { applyPolicies, policyTable } from '../../src/cli/policies.js';

export default class PoliciesApply extends BaseCommand<typeof PoliciesApply> {
  static override summary = 'Register the policies of a policy document (one per section)';
  static override description = [
    'Each section of the document becomes one enabled policy. A document with a line the gateway cannot parse is',
    'refused whole and nothing is registered; check it first, offline, with: agentpay policies lint FILE.',
  ].join('\n');
  static override examples = ['<%= config.bin %> policies apply policies.txt', '<%= config.bin %> policies apply policies.txt --json'];
  static override args = { file: Args.string({ description: 'the policy document', required: true }) };

  async run(): Promise<void> {
    const res = await applyPolicies(this.client(), this.args.file);
    this.out.result(res, () => policyTable(res.policies));
  }
}
