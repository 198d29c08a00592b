import { Args } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { providerFields } from '../../src/cli/providers.js';

export default class ProvidersUnsuspend extends BaseCommand<typeof ProvidersUnsuspend> {
  static override summary = 'Lift the suspension of a provider (operator key)';
  static override examples = ['<%= config.bin %> providers unsuspend prv_123 --as operator'];
  static override args = { id: Args.string({ description: 'provider id', required: true }) };

  async run(): Promise<void> {
    const provider = await this.client().providers.unsuspend(this.args.id);
    this.out.result({ provider }, () => providerFields(provider));
  }
}
