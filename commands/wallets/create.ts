import { Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { askChoice, askText, canPrompt } from '../../src/cli/prompts.js';
import { createWallet, walletFields } from '../../src/cli/wallets.js';

export default class WalletsCreate extends BaseCommand<typeof WalletsCreate> {
  static override summary = 'Create a wallet; an agent wallet registers the ed25519 key that signs its payments';
  static override description = [
    '--generate-key --key-file PATH makes a key pair here, writes the private key to PATH (mode 0600; an existing',
    'file is never overwritten) and registers the public half. Or register a key you hold with --public-key-file.',
  ].join(' ');
  static override examples = [
    '<%= config.bin %> wallets create --owner-type agent --owner-id researcher --generate-key --key-file researcher.pem',
    '<%= config.bin %> wallets create --owner-type agent --owner-id researcher --public-key-file researcher.pub.pem',
    '<%= config.bin %> wallets create --owner-type workspace --owner-id treasury',
  ];
  static override flags = {
    'owner-type': Flags.option({ options: ['agent', 'workspace'] as const, description: 'agent (one per buying agent) or workspace' })(),
    'owner-id': Flags.string({ description: 'your label for the owner, e.g. the agent\'s name' }),
    'public-key-file': Flags.string({ description: 'ed25519 public key (PEM) to register', exclusive: ['generate-key'] }),
    'generate-key': Flags.boolean({ description: 'generate a key pair and register its public half', dependsOn: ['key-file'] }),
    'key-file': Flags.string({ description: 'where --generate-key writes the private key (mode 0600)', dependsOn: ['generate-key'] }),
  };

  async run(): Promise<void> {
    const f = this.flags;
    const ownerType = await askChoice({ flag: '--owner-type', message: 'Owner type', value: f['owner-type'], choices: ['agent', 'workspace'] as const });
    const ownerId = await askText({ flag: '--owner-id', message: ownerType === 'agent' ? "Agent's name" : 'Owner label', value: f['owner-id'] });
    // on a terminal, an agent wallet without a key gets one generated, at a path the person confirms
    const offerKey = ownerType === 'agent' && !f['public-key-file'] && !f['generate-key'] && canPrompt();
    const keyFile = offerKey
      ? await askText({ flag: '--key-file', message: 'Generate a key pair; write the private key to', default: `${ownerId}.pem` })
      : f['key-file'];
    const res = await createWallet(this.client(), { ownerType, ownerId, publicKeyFile: f['public-key-file'], generateKeyFile: keyFile });
    this.out.result(res, () => walletFields(res.wallet, res.keyFile ? [['private key', `${res.keyFile} (mode 0600; keep it secret)`]] : []));
  }
}
