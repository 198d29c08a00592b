import { Flags } from '@oclif/core';
import { BaseCommand } from '../src/cli/base-command.js';
import { login, loginText } from '../src/cli/account.js';

export default class Login extends BaseCommand<typeof Login> {
  static override summary = 'Check a key and save it as a profile';
  static override description = [
    'Three ways in: an API key (--api-key, with --gateway-url and --ca), an account (--email and --password: a new',
    '30-day key is made), or a local dev gateway (--data-dir DIR --as workspace|provider|operator). The key is',
    'checked with whoami, then saved (mode 0600) as profile --profile NAME (default "default") and made current.',
  ].join(' ');
  static override examples = [
    '<%= config.bin %> login --gateway-url https://127.0.0.1:4402 --ca .agentpay/tls/ca.pem --api-key ap_w_...',
    '<%= config.bin %> login --email ops@acme.test --profile acme',
    '<%= config.bin %> login --data-dir .agentpay --as provider --profile seller',
  ];
  static override flags = {
    email: Flags.string({ description: 'log in to an account with its email and password' }),
    password: Flags.string({ description: 'account password (asked for, hidden, when omitted on a terminal)', exclusive: ['password-stdin'] }),
    'password-stdin': Flags.boolean({ description: 'read the password from stdin' }),
  };

  async run(): Promise<void> {
    const notes: string[] = [];
    const outcome = await login(this.connection({ optionalProfile: true }), {
      email: this.flags.email,
      password: this.flags.password,
      passwordStdin: this.flags['password-stdin'],
      profileName: this.flags.profile,
      onNote: (n) => notes.push(n),
    });
    this.out.result(outcome, () => loginText(outcome));
    // which profile is current now, and how to go back: on stderr, so stdout stays the result
    for (const n of notes) this.out.note(n);
  }
}
