import { Flags } from '@oclif/core';
import { AgentpayCommand } from '../../src/cli/base-command.js';

export default class GatewayOperatorKey extends AgentpayCommand<typeof GatewayOperatorKey> {
  static override summary = "Make an operator key on the machine that holds the gateway's data directory (shown once)";
  static override description = [
    'Operators verify and suspend sellers and rotate the platform key. They do not sign up: an operator key is',
    "made here, by whoever can write the gateway's data directory (the database is the gateway). A production",
    'gateway gets its first operator this way; the gateway may be running. The key is shown once; only its hash',
    'is stored. Revoke it with `agentpay keys revoke` using another operator key.',
  ].join(' ');
  static override examples = [
    '<%= config.bin %> gateway operator-key --data-dir /var/lib/agentpay --name alice',
    '<%= config.bin %> gateway operator-key --database postgres://agentpay@db.internal:5432/agentpay --name alice',
    'AGENTPAY_API_KEY=$(<%= config.bin %> gateway operator-key --data-dir /var/lib/agentpay --json | jq -r .apiKey.key)',
  ];
  static override flags = {
    'data-dir': Flags.string({ description: "the gateway's data directory [default: .agentpay]", env: 'AGENTPAY_DATA_DIR' }),
    name: Flags.string({ description: 'a label for the key, e.g. who holds it [default: operator]' }),
    database: Flags.string({ description: "the fleet's PostgreSQL URL (postgres://user:password@host:5432/db), for a gateway started with --database", env: 'AGENTPAY_DATABASE_URL' }),
  };

  async run(): Promise<void> {
    const { issueOperatorKey } = await import('../../src/cli/operator-key.js');
    const { createdKeyText } = await import('../../src/cli/keys.js');
    const { LOCAL_DATA_DIR } = await import('../../src/cli/local-gateway.js');
    const envVar = this.flagsFromEnv().get('database');
    const key = await issueOperatorKey(this.flags['data-dir'] ?? LOCAL_DATA_DIR, this.flags.name ?? 'operator', this.flags.database,
      envVar ? { from: 'env', flag: '--database', env: envVar } : undefined);
    this.out.result({ apiKey: key }, () => createdKeyText(key));
    this.out.note('This operator key is shown once and cannot be retrieved again: store it now.');
  }
}
