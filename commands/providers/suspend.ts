import { Args } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { providerFields } from '../../src/cli/providers.js';

export default class ProvidersSuspend extends BaseCommand<typeof ProvidersSuspend> {
  static override summary = "Suspend a provider (operator key): its capabilities leave discovery at once";
  static override examples = ['<%= config.bin %> providers suspend prv_123 --as operator'];
  static override args = { id: Args.string({ description: 'provider id', required: true }) };

  async run(): Promise<void> {
    const provider = await this.client().providers.suspend(this.args.id);
    this.out.result({ provider }, () => providerFields(provider));
  }
}
