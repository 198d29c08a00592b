import { Args } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { sandboxPrice, settingsFields } from '../../src/cli/rails.js';

export default class SandboxPrice extends BaseCommand<typeof SandboxPrice> {
  static override summary = 'Sandbox: move the USDC price (operator key); without a price, show the settings';
  static override description = 'Outside ±0.5% of 1 USD, USDC deposits are held and USDC payouts refused (TREASURY_UNAVAILABLE); held deposits are credited once the price is back in band.';
  static override examples = ['<%= config.bin %> sandbox price 0.994 --as operator', '<%= config.bin %> sandbox price 1.0 --as operator'];
  static override args = { price: Args.string({ description: 'USD per USDC, e.g. 0.994 (at most 6 decimals)' }) };

  async run(): Promise<void> {
    const settings = await sandboxPrice(() => this.client(), this.args.price);
    this.out.result({ settings }, () => settingsFields(settings));
  }
}
