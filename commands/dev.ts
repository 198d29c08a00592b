import { Flags } from '@oclif/core';
import { AgentpayCommand } from '../src/cli/base-command.js';

export default class Dev extends AgentpayCommand<typeof Dev> {
  static override summary = 'Start a local gateway (sandbox by default) with dev keys';
  static override description = [
    'Starts a gateway on this machine: HTTPS on --port, and a plain-HTTP listener on --http-port that answers',
    'every request 403 INSECURE_TRANSPORT. On first start it makes a local certificate authority, an operator key,',
    'one workspace and one verified provider, keeping their keys in DATA_DIR/dev-credentials.json (mode 0600);',
    'later starts reuse them, replacing a key that was revoked or expired. While it runs, DATA_DIR/gateway.json says where it listens, so other agentpay',
    'commands in this directory and the directories below it find it (as git finds .git), and `agentpay dev env` prints the settings',
    'a seller or buyer in another terminal needs. SIGINT/SIGTERM stop it gracefully.',
  ].join(' ');
  static override examples = [
    '<%= config.bin %> dev',
    '<%= config.bin %> dev --port 0 --http-port 0 --json',
    '<%= config.bin %> dev --data-dir /tmp/agentpay --dev-echo-tokens',
  ];
  static override baseFlags = { json: Flags.boolean({ description: 'print exactly one JSON line on stdout once ready; logs go to stderr' }) };
  static override flags = {
    port: Flags.integer({ description: 'HTTPS port; 0 picks a free one', default: 4402, min: 0, max: 65535 }),
    'http-port': Flags.integer({ description: 'plain-HTTP port (answers 403 INSECURE_TRANSPORT); 0 picks a free one', default: 4080, min: 0, max: 65535 }),
    'data-dir': Flags.string({ description: 'database, keys, certificate and dev credentials [default: the nearest .agentpay, here or in a parent directory, else ./.agentpay]' }),
    mode: Flags.option({ options: ['sandbox', 'production'] as const, description: 'sandbox: development shortcuts such as wallet funding work', default: 'sandbox' as const })(),
    'dev-echo-tokens': Flags.boolean({ description: 'signup and password-reset responses include the token (refused in production mode)' }),
    quiet: Flags.boolean({ char: 'q', description: 'log warnings and errors only' }),
    'log-format': Flags.option({ options: ['auto', 'pretty', 'json'] as const, description: 'log lines on stderr: auto is one readable line per request on a terminal, JSON (pino) when piped', default: 'auto' as const })(),
    database: Flags.string({ description: 'PostgreSQL URL (postgres://user:password@host:5432/db) instead of SQLite in the data dir', env: 'AGENTPAY_DATABASE_URL' }),
  };

  async run(): Promise<void> {
    // the gateway is loaded only when this command runs, so other commands start fast
    const { startDev, readyLine, devBanner } = await import('../src/cli/dev.js');
    const { untilStopSignal } = await import('../src/cli/gateway-runner.js');
    const { removeGatewayFile, findLocalDataDir, LOCAL_DATA_DIR } = await import('../src/cli/local-gateway.js');
    const dev = await startDev({
      port: this.flags.port,
      httpPort: this.flags['http-port'],
      dataDir: this.flags['data-dir'] ?? findLocalDataDir() ?? LOCAL_DATA_DIR,
      mode: this.flags.mode,
      devEchoTokens: this.flags['dev-echo-tokens'],
      quiet: this.flags.quiet,
      logFormat: this.flags['log-format'],
      database: this.flags.database,
      databaseFromEnv: this.flagsFromEnv().get('database'),
    });
    // listening for SIGINT/SIGTERM before saying ready: a supervisor may stop it the moment it reads the line
    const stopSignal = untilStopSignal(() => removeGatewayFile(dev.ready.dataDir));
    process.stdout.write((this.flags.json ? readyLine(dev.ready) : devBanner(dev.ready, dev.config.mode)) + '\n');
    const signal = await stopSignal;
    dev.log.info({ signal }, 'stopping');
    await dev.stop();
    this.exit(0);
  }
}
