import { Args } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { removeProfile } from '../../src/cli/profile.js';

export default class ConfigRemove extends BaseCommand<typeof ConfigRemove> {
  static override summary = 'Delete a saved profile (its key stays valid; revoke it with keys revoke)';
  static override examples = ['<%= config.bin %> config remove acme'];
  static override args = { name: Args.string({ description: 'profile name', required: true }) };

  async run(): Promise<void> {
    removeProfile(this.args.name);
    this.out.result({ removed: this.args.name }, () => `Removed profile ${this.args.name}`);
  }
}
