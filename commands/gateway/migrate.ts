import { Flags } from '@oclif/core';
import { AgentpayCommand } from '../../src/cli/base-command.js';

export default class GatewayMigrate extends AgentpayCommand<typeof GatewayMigrate> {
  static override summary = "Bring a PostgreSQL database to this agentpay's schema, without serving";
  static override description = [
    'For deploy pipelines: applies the migrations the database lacks, one instance at a time (an advisory lock:',
    'several runs at once migrate once), then exits. Gateways started with --database do the same at start, so',
    'this step is optional; it lets a pipeline migrate before rolling out new instances. A database migrated by',
    'a newer agentpay is refused (exit 1). The password in the URL is never printed.',
  ].join(' ');
  static override examples = [
    '<%= config.bin %> gateway migrate --database postgres://agentpay:secret@db.internal:5432/agentpay',
    'AGENTPAY_DATABASE_URL=postgres://agentpay@db.internal/agentpay <%= config.bin %> gateway migrate --json',
  ];
  static override baseFlags = { json: Flags.boolean({ description: 'print {database, applied} as JSON' }) };
  static override flags = {
    database: Flags.string({ description: 'PostgreSQL URL (postgres://user:password@host:5432/db)', env: 'AGENTPAY_DATABASE_URL', required: true }),
  };

  async run(): Promise<void> {
    const { PgStore } = await import('../../src/store/pg/pg-store.js');
    const { DatabaseUnavailable, redactUrl } = await import('../../src/store/errors.js');
    const { databaseUnavailable } = await import('../../src/cli/gateway-runner.js');
    const url = this.flags.database;
    let applied: number;
    try {
      applied = await PgStore.applyMigrations(url);
    } catch (e) {
      const envVar = this.flagsFromEnv().get('database');
      if (e instanceof DatabaseUnavailable) throw databaseUnavailable(e, envVar ? { from: 'env', flag: '--database', env: envVar } : undefined);
      throw e;
    }
    const database = redactUrl(url);
    this.out.result({ database, applied }, () =>
      applied === 0 ? `${database} is up to date` : `${database}: applied ${applied} migration${applied === 1 ? '' : 's'}`);
  }
}
