import { Flags } from '@oclif/core';
import { BaseCommand } from '../src/cli/base-command.js';
import { signup, signupText } from '../src/cli/account.js';

export default class Signup extends BaseCommand<typeof Signup> {
  static override summary = 'Sign up a workspace (buyer) or provider (seller) and verify it';
  static override description = [
    'Starts a signup, then verifies it with the token: from --token, from the response when the gateway echoes it',
    '(agentpay dev --dev-echo-tokens), or by asking on a terminal. Without a terminal and without a token the signup',
    'stays pending; verify it later with --signup-id and --token. If the email already has an account, the gateway',
    'answers the same but mails its owner a notice instead of a token: log in or reset the password then. The new',
    'key is saved as a profile (--profile NAME, default "default") and made current. Missing values are asked for on',
    'a terminal; every one is also a flag.',
  ].join(' ');
  static override examples = [
    '<%= config.bin %> signup',
    '<%= config.bin %> signup --kind workspace --name "Acme Research" --email ops@acme.test --password "$PASSWORD"',
    'printf %s "$PASSWORD" | <%= config.bin %> signup --kind provider --name "Weather Co" --email ops@weather.test --password-stdin',
    '<%= config.bin %> signup --signup-id sgn_123 --token 0f3a...',
  ];
  static override flags = {
    kind: Flags.option({ options: ['workspace', 'provider'] as const, description: 'workspace (buys) or provider (sells)' })(),
    name: Flags.string({ description: 'workspace or provider name' }),
    email: Flags.string({ description: 'account email; the verification token is sent there (or, if it has an account already, a notice)' }),
    password: Flags.string({ description: 'account password (asked for, hidden, when omitted on a terminal)', exclusive: ['password-stdin'] }),
    'password-stdin': Flags.boolean({ description: 'read the password from stdin (keeps it out of the process list and shell history)' }),
    website: Flags.string({ description: "provider's website" }),
    'signup-id': Flags.string({ description: 'verify this existing signup instead of starting a new one' }),
    token: Flags.string({ description: 'verification token of --signup-id', dependsOn: ['signup-id'] }),
  };

  async run(): Promise<void> {
    const f = this.flags;
    const notes: string[] = [];
    const outcome = await signup(this.connection({ optionalProfile: true }), {
      signupId: f['signup-id'],
      token: f.token,
      kind: f.kind,
      name: f.name,
      email: f.email,
      password: f.password,
      passwordStdin: f['password-stdin'],
      website: f.website,
      profileName: f.profile,
      onNote: (n) => notes.push(n),
    });
    this.out.result(outcome, () => signupText(outcome));
    // which profile is current now, and how to go back: on stderr, so stdout stays the result
    for (const n of notes) this.out.note(n);
    if (outcome.next) this.out.note(`Next: verify it with the token: ${outcome.next}`);
  }
}
