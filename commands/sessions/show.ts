import { Args } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { sessionDetailText, showSession } from '../../src/cli/sessions.js';

export default class SessionsShow extends BaseCommand<typeof SessionsShow> {
  static override summary = 'Show one payment session and its claims';
  static override examples = ['<%= config.bin %> sessions show ses_123', '<%= config.bin %> sessions show ses_123 --json'];
  static override args = { id: Args.string({ description: 'session id (ses_…)', required: true }) };

  async run(): Promise<void> {
    const detail = await showSession(this.client(), this.args.id);
    this.out.result(detail, () => sessionDetailText(detail));
  }
}
