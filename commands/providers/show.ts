import { Args } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { providerFields } from '../../src/cli/providers.js';

export default class ProvidersShow extends BaseCommand<typeof ProvidersShow> {
  static override summary = 'Show one seller (its verification request too, for itself and the operator)';
  static override examples = ['<%= config.bin %> providers show prv_123'];
  static override args = { id: Args.string({ description: 'provider id', required: true }) };

  async run(): Promise<void> {
    const provider = await this.client().providers.get(this.args.id);
    this.out.result({ provider }, () => providerFields(provider));
  }
}
