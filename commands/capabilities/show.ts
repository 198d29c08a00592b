import { Args } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { capabilityDetailText } from '../../src/cli/capabilities.js';

export default class CapabilitiesShow extends BaseCommand<typeof CapabilitiesShow> {
  static override summary = 'Show one capability with its seller, and its address if discoverable (or yours)';
  static override examples = ['<%= config.bin %> capabilities show cap_123'];
  static override args = { id: Args.string({ description: 'capability id', required: true }) };

  async run(): Promise<void> {
    const detail = await this.client().capabilities.get(this.args.id);
    this.out.result(detail, () => capabilityDetailText(detail));
  }
}
