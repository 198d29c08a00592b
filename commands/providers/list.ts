import { Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { providerTable } from '../../src/cli/providers.js';

export default class ProvidersList extends BaseCommand<typeof ProvidersList> {
  static override summary = 'List sellers: a provider key sees itself, a workspace key verified sellers, the operator all';
  static override examples = ['<%= config.bin %> providers list', '<%= config.bin %> providers list --verification requested --as operator'];
  static override flags = {
    verification: Flags.option({ options: ['requested', 'approved', 'denied'] as const, description: "operator: only providers whose latest verification request has this status, oldest first" })(),
  };

  async run(): Promise<void> {
    const providers = await this.client().providers.list(this.flags.verification ? { verification: this.flags.verification } : {});
    this.out.result({ providers }, () => providerTable(providers));
  }
}
