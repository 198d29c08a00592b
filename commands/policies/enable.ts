import { Args } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { policyFields, setEnabled } from '../../src/cli/policies.js';

export default class PoliciesEnable extends BaseCommand<typeof PoliciesEnable> {
  static override summary = 'Apply a disabled policy again, from the next purchase on';
  static override examples = ['<%= config.bin %> policies enable pol_123'];
  static override args = { id: Args.string({ description: 'policy id (pol_…)', required: true }) };

  async run(): Promise<void> {
    const res = await setEnabled(this.client(), this.args.id, true);
    this.out.result(res, () => policyFields(res.policy));
  }
}
