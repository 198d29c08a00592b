import { Flags } from '@oclif/core';
import { AgentpayCommand } from '../../src/cli/base-command.js';
import { EXIT } from '../../src/cli/errors/index.js';

export default class LedgerVerify extends AgentpayCommand<typeof LedgerVerify> {
  static override summary = "Check that the ledger was not edited behind the gateway's back";
  static override description = [
    "Reads the gateway's database (--data-dir for SQLite, --database for PostgreSQL) and recomputes every",
    "wallet's hash chain, the running sums, the balances and the holds; checks each resolved transaction against",
    "its entries and its signed receipt, and every signed checkpoint against the chains. Exit 0 when all hold;",
    'exit 1 listing each problem with the wallet, the entry and what broke. What it proves and what it cannot:',
    'docs/ledger.md. It changes nothing (a SQLite database of an older agentpay is first brought to this schema,',
    'as a start would).',
  ].join(' ');
  static override examples = [
    '<%= config.bin %> ledger verify --data-dir /var/lib/agentpay',
    '<%= config.bin %> ledger verify --database postgres://agentpay@db.internal:5432/agentpay --json',
  ];
  static override baseFlags = { json: Flags.boolean({ description: 'print {ok, wallets, entries, transactions, receipts, checkpoints, problems} as JSON' }) };
  static override flags = {
    'data-dir': Flags.string({ description: "the gateway's data directory [default: .agentpay]", env: 'AGENTPAY_DATA_DIR' }),
    database: Flags.string({ description: "the fleet's PostgreSQL URL (postgres://user:password@host:5432/db), for a gateway started with --database", env: 'AGENTPAY_DATABASE_URL' }),
  };

  async run(): Promise<void> {
    const { verifyLedgerAt, ledgerReportText } = await import('../../src/cli/ledger-verify.js');
    const { LOCAL_DATA_DIR } = await import('../../src/cli/local-gateway.js');
    const envVar = this.flagsFromEnv().get('database');
    const report = await verifyLedgerAt(this.flags['data-dir'] ?? LOCAL_DATA_DIR, this.flags.database,
      envVar ? { from: 'env', flag: '--database', env: envVar } : undefined);
    this.out.result(report, () => ledgerReportText(report));
    if (!report.ok) this.exit(EXIT.REFUSED);
  }
}
