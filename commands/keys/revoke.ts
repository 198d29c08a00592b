import { Args } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { revokedText } from '../../src/cli/keys.js';

export default class KeysRevoke extends BaseCommand<typeof KeysRevoke> {
  static override summary = 'Revoke an API key and every key made from it: from now on they get 401 UNAUTHORIZED';
  static override examples = ['<%= config.bin %> keys revoke key_123'];
  static override args = { id: Args.string({ description: 'key id (from keys list)', required: true }) };

  async run(): Promise<void> {
    const res = await this.client().keys.revoke(this.args.id);
    this.out.result(res, () => revokedText(res));
  }
}
