import { Args } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { capabilityText } from '../../src/cli/capabilities.js';

export default class CapabilitiesDeprecate extends BaseCommand<typeof CapabilitiesDeprecate> {
  static override summary = 'Deprecate a capability: it leaves discovery at once but still resolves by id';
  static override examples = ['<%= config.bin %> capabilities deprecate cap_123'];
  static override args = { id: Args.string({ description: 'capability id', required: true }) };

  async run(): Promise<void> {
    const capability = await this.client().capabilities.deprecate(this.args.id);
    this.out.result({ capability }, () => capabilityText(capability));
  }
}
