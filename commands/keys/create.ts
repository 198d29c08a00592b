import { Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { createKey, createKeyInput, createdKeyText } from '../../src/cli/keys.js';

export default class KeysCreate extends BaseCommand<typeof KeysCreate> {
  static override summary = 'Create an API key for this tenant (the key is shown once)';
  static override description = [
    'Without --scopes or --for-agent the new key gets the calling key\'s scopes. --for-agent makes a key for a',
    'buying agent: it can discover, read its wallets, receipts and approvals, and rate sellers, but it lacks',
    'approvals:write, so a model cannot approve its own held spend. The new key expires no later than the calling',
    'key (by default when it does), and revoking the calling key revokes it too.',
  ].join(' ');
  static override examples = [
    '<%= config.bin %> keys create --name research-agent --for-agent',
    '<%= config.bin %> keys create --name ci --scopes wallets:read,receipts:read --expires-in 30d',
  ];
  static override flags = {
    name: Flags.string({ description: 'a label for the key' }),
    scopes: Flags.string({ description: 'comma-separated scopes, a subset of the calling key\'s', exclusive: ['for-agent'] }),
    'for-agent': Flags.boolean({ description: 'the agent preset: no approvals:write, no policy or key changes', exclusive: ['scopes'] }),
    'expires-in': Flags.string({ description: "lifetime such as 12h, 30d or 2w, ending no later than the calling key's expiry (default: the calling key's expiry; never, for a key that never expires)" }),
  };

  async run(): Promise<void> {
    // the flags first: a usage error is reported as such, whether or not a gateway is configured
    const input = createKeyInput({
      name: this.flags.name,
      scopes: this.flags.scopes,
      expiresIn: this.flags['expires-in'],
      forAgent: this.flags['for-agent'],
    });
    const key = await createKey(this.client(), input);
    this.out.result({ apiKey: key }, () => createdKeyText(key));
    this.out.note('This key is shown once and cannot be retrieved again: store it now.');
  }
}
