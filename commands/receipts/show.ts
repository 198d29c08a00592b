import { Args } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { receiptFields, showReceipt } from '../../src/cli/receipts.js';

export default class ReceiptsShow extends BaseCommand<typeof ReceiptsShow> {
  static override summary = "Show one receipt and check its platform signature";
  static override examples = ['<%= config.bin %> receipts show rcp_123'];
  static override args = { id: Args.string({ description: 'receipt id', required: true }) };

  async run(): Promise<void> {
    const checked = await showReceipt(this.client(), this.args.id);
    this.out.result(checked, () => receiptFields(checked.receipt, [['signature', checked.signatureValid ? 'valid' : 'INVALID']]));
  }
}
