import { BaseCommand } from '../../src/cli/base-command.js';
import { renderFields } from '../../src/cli/output.js';

export default class KeysRotate extends BaseCommand<typeof KeysRotate> {
  static override summary = "Rotate the platform's signing key (operator key)";
  static override description =
    'New challenges and receipts are signed with the new key at once; old receipt keys stay retrievable by id, so old receipts stay verifiable.';
  static override examples = ['<%= config.bin %> keys rotate --data-dir .agentpay --as operator'];

  async run(): Promise<void> {
    const res = await this.client().platform.rotateKeys();
    this.out.result(res, () => renderFields([['signing key', res.signingKeyId]]));
  }
}
