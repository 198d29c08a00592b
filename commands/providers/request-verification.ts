import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { providerFields, requestVerification } from '../../src/cli/providers.js';

export default class ProvidersRequestVerification extends BaseCommand<typeof ProvidersRequestVerification> {
  static override summary = 'Ask the operator to verify your provider (asking again updates the request)';
  static override description = 'Only verified sellers appear in discovery. Without ID, the provider of the key in use is meant.';
  static override examples = [
    '<%= config.bin %> providers request-verification --note "We run the Acme summarizer" --contact ops@acme.test',
    '<%= config.bin %> providers request-verification prv_123',
  ];
  static override args = { id: Args.string({ description: 'provider id (default: the provider of the key in use)' }) };
  static override flags = {
    note: Flags.string({ description: 'a note for the operator' }),
    contact: Flags.string({ description: 'how the operator can reach you' }),
  };

  async run(): Promise<void> {
    const provider = await requestVerification(this.client(), this.args.id, { note: this.flags.note, contact: this.flags.contact });
    this.out.result({ provider }, () => providerFields(provider));
  }
}
