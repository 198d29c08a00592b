import { Args } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { policyFields, setEnabled } from '../../src/cli/policies.js';

export default class PoliciesDisable extends BaseCommand<typeof PoliciesDisable> {
  static override summary = 'Stop applying a policy from the next purchase on (it is kept; enable it again any time)';
  static override examples = ['<%= config.bin %> policies disable pol_123'];
  static override args = { id: Args.string({ description: 'policy id (pol_…)', required: true }) };

  async run(): Promise<void> {
    const res = await setEnabled(this.client(), this.args.id, false);
    this.out.result(res, () => policyFields(res.policy));
  }
}
