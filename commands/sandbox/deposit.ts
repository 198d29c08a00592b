import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { askText } from '../../src/cli/prompts.js';
import { parseUsdcAmountFlag, transactionTable } from '../../src/cli/rails.js';

export default class SandboxDeposit extends BaseCommand<typeof SandboxDeposit> {
  static override summary = 'Sandbox: send USDC to one of your deposit addresses on the sandbox chain';
  static override description = 'The amount is in USDC base units (6 decimals): --amount 1000000 is 1 USDC. Answers DEPOSIT_HELD while the USDC price is out of band.';
  static override examples = ['<%= config.bin %> sandbox deposit 0xabc… --amount 25000000'];
  static override args = { address: Args.string({ description: 'a deposit address (agentpay wallets deposit-address WAL_ID)', required: true }) };
  static override flags = { amount: Flags.string({ description: 'USDC base units, e.g. 1000000 for 1 USDC' }) };

  async run(): Promise<void> {
    const amount = await askText({ flag: '--amount', message: 'USDC base units (1000000 = 1 USDC)', value: this.flags.amount });
    const transaction = await this.client().sandbox.deposit(this.args.address, parseUsdcAmountFlag(amount));
    this.out.result({ transaction }, () => transactionTable([transaction]));
  }
}
