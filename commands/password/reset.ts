import { Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { resetPassword } from '../../src/cli/password.js';

export default class PasswordReset extends BaseCommand<typeof PasswordReset> {
  static override summary = "Set an account's new password with a reset token";
  static override description = [
    'The token comes from agentpay password forgot (mailed, or in DATA_DIR/outbox.jsonl of a local gateway) and works',
    'once. It revokes the keys the account\'s logins issued (and the keys made from them); other keys are left alone:',
    'revoke any that leaked with agentpay keys revoke.',
  ].join(' ');
  static override examples = [
    '<%= config.bin %> password reset --token 0f3a...',
    'printf %s "$NEW_PASSWORD" | <%= config.bin %> password reset --token 0f3a... --password-stdin',
  ];
  static override flags = {
    token: Flags.string({ description: 'the reset token (asked for on a terminal when omitted)' }),
    password: Flags.string({ description: 'the new password (asked for, hidden, when omitted on a terminal)', exclusive: ['password-stdin'] }),
    'password-stdin': Flags.boolean({ description: 'read the new password from stdin (keeps it out of the process list and shell history)' }),
  };

  async run(): Promise<void> {
    const outcome = await resetPassword(this.connection({ optionalProfile: true }), {
      token: this.flags.token,
      password: this.flags.password,
      passwordStdin: this.flags['password-stdin'],
    });
    this.out.result(outcome, () => 'Password changed.');
    this.out.note(`Next: ${outcome.next}`);
  }
}
