import { Args } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { useProfile } from '../../src/cli/profile.js';

export default class ConfigUse extends BaseCommand<typeof ConfigUse> {
  static override summary = 'Make a saved profile the current one';
  static override examples = ['<%= config.bin %> config use acme'];
  static override args = { name: Args.string({ description: 'profile name', required: true }) };

  async run(): Promise<void> {
    useProfile(this.args.name);
    this.out.result({ current: this.args.name }, () => `Current profile: ${this.args.name}`);
  }
}
