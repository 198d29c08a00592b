import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { usageError } from '../../src/cli/errors/index.js';
import { settingsFields } from '../../src/cli/rails.js';

const SERVICES = { screening: 'screeningDown', pricing: 'pricingDown', payouts: 'payoutsDown' } as const;

export default class SandboxOutage extends BaseCommand<typeof SandboxOutage> {
  static override summary = 'Sandbox: take the screening service, the price feed or the payout rails down or up (operator key)';
  static override examples = ['<%= config.bin %> sandbox outage screening --down --as operator', '<%= config.bin %> sandbox outage screening --up --as operator'];
  static override args = { service: Args.string({ options: Object.keys(SERVICES), description: 'screening, pricing or payouts', required: true }) };
  static override flags = {
    down: Flags.boolean({ description: 'take it down', exclusive: ['up'] }),
    up: Flags.boolean({ description: 'bring it back', exclusive: ['down'] }),
  };

  async run(): Promise<void> {
    // refused rather than guessed: a bare `sandbox outage SERVICE` must never take a service down
    if (Boolean(this.flags.down) === Boolean(this.flags.up)) {
      throw usageError('pass exactly one of --down or --up', `agentpay sandbox outage ${this.args.service} --down (or --up)`);
    }
    const key = SERVICES[this.args.service as keyof typeof SERVICES];
    const settings = await this.client().sandbox.update({ [key]: Boolean(this.flags.down) });
    this.out.result({ settings }, () => settingsFields(settings));
  }
}
