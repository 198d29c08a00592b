import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { endpointFields } from '../../src/cli/webhooks.js';

export default class WebhooksRotateSecret extends BaseCommand<typeof WebhooksRotateSecret> {
  static override summary = "Give an endpoint a new signing secret (printed once); the old one keeps signing beside it for a while";
  static override description = [
    'For --keep-previous seconds (default 86400, a day) each delivery carries two v1 signatures, one per secret,',
    'so your receiver can move to the new secret in its own time. --keep-previous 0 retires the old one at once.',
  ].join('\n');
  static override examples = ['<%= config.bin %> webhooks rotate-secret whe_123', '<%= config.bin %> webhooks rotate-secret whe_123 --keep-previous 3600 --json'];
  static override args = { id: Args.string({ description: 'endpoint id (whe_…)', required: true }) };
  static override flags = {
    'keep-previous': Flags.integer({ description: 'seconds the old secret keeps signing, 0 to 604800 [default: 86400]', min: 0, max: 604_800 }),
  };

  async run(): Promise<void> {
    const keep = this.flags['keep-previous'];
    const res = await this.client().webhooks.rotateSecret(this.args.id, keep !== undefined ? { keepPreviousForSeconds: keep } : {});
    this.out.result(res, () => `Rotated.\n${endpointFields(res.endpoint, res.secret)}${res.endpoint.previousSecretExpiresAt ? `\nthe previous secret signs too until ${res.endpoint.previousSecretExpiresAt}` : ''}`);
  }
}
