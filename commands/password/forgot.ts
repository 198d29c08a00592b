import { Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { forgotPassword, forgotText } from '../../src/cli/password.js';

export default class PasswordForgot extends BaseCommand<typeof PasswordForgot> {
  static override summary = "Ask for a one-time token to reset an account's password";
  static override description = [
    'The gateway mails the token to the email when it has an account, else a note that it has none, and answers the',
    'same either way. A local gateway has no mail server: it writes the message to DATA_DIR/outbox.jsonl. Then:',
    'agentpay password reset --token TOKEN.',
  ].join(' ');
  static override examples = ['<%= config.bin %> password forgot --email ops@acme.test'];
  static override flags = {
    email: Flags.string({ description: 'the account email (asked for on a terminal when omitted)' }),
  };

  async run(): Promise<void> {
    const outcome = await forgotPassword(this.connection({ optionalProfile: true }), { email: this.flags.email });
    this.out.result(outcome, () => forgotText(outcome));
    this.out.note(`Next: ${outcome.next}`);
  }
}
