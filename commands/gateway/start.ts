import { Flags } from '@oclif/core';
import { AgentpayCommand } from '../../src/cli/base-command.js';
import { DEFAULT_PAYMENTS } from '../../src/domain/payments/config.js';

const port = (description: string, env: string) => Flags.integer({ description, env, min: 0, max: 65535 });
const positive = (description: string, env: string) => Flags.integer({ description, env, min: 1 });

export default class GatewayStart extends AgentpayCommand<typeof GatewayStart> {
  static override summary = 'Start a gateway for deployment (production mode by default)';
  static override description = [
    'Configuration comes from flags, then AGENTPAY_* environment variables, then the JSON file given with',
    '--config, then defaults; it is checked once, before anything listens. No dev credentials are made.',
    'With --json, one JSON line {baseUrl, httpUrl, caCertPath, dataDir} is printed on stdout once ready;',
    'logs always go to stderr. SIGINT/SIGTERM stop it gracefully.',
  ].join(' ');
  static override examples = [
    '<%= config.bin %> gateway start --data-dir /var/lib/agentpay',
    '<%= config.bin %> gateway start --config agentpay.json --json',
    '<%= config.bin %> gateway start --no-tls --trust-proxy --host 0.0.0.0 --port 8080',
  ];
  static override baseFlags = { json: Flags.boolean({ description: 'print one JSON line on stdout once ready' }) };
  static override flags = {
    config: Flags.string({ description: 'JSON config file (keys: mode, host, port, httpPort, dataDir, database, feeBps, trustProxy, tls, devEchoTokens, logLevel, logFormat, tokenTtlMs, rails, redis, metrics, metricsToken, rateLimit{max, windowMs, signupMax, signupWindowMs, paymentMax, paymentWindowMs}, accountLimits{loginFailuresBeforeBackoff, loginFailureWindowMs, loginBackoffMs, loginBackoffMaxMs, resetMailIntervalMs, resetMailsPerDay, keysPerTenant}, smtpUrl, mailFrom)', env: 'AGENTPAY_GATEWAY_CONFIG' }),
    mode: Flags.option({ options: ['sandbox', 'production'] as const, description: '[default: production]', env: 'AGENTPAY_MODE' })(),
    host: Flags.string({ description: 'address to listen on [default: 127.0.0.1]', env: 'AGENTPAY_HOST' }),
    port: port('HTTPS port (or the plain port with --no-tls); 0 picks a free one [default: 4402]', 'AGENTPAY_PORT'),
    'http-port': port('plain-HTTP port that answers 403 INSECURE_TRANSPORT [default: 4080]', 'AGENTPAY_HTTP_PORT'),
    'data-dir': Flags.string({ description: 'database, signing keys and certificate [default: .agentpay]', env: 'AGENTPAY_DATA_DIR' }),
    'fee-bps': Flags.integer({ description: `platform fee in basis points, 300 = 3% [default: ${DEFAULT_PAYMENTS.feeBps}]`, env: 'AGENTPAY_FEE_BPS', min: 0, max: 10_000 }),
    'trust-proxy': Flags.boolean({ description: 'honour x-forwarded-proto from a TLS-terminating proxy', env: 'AGENTPAY_TRUST_PROXY', allowNo: true }),
    tls: Flags.boolean({ description: 'serve HTTPS; --no-tls serves plain HTTP behind a TLS proxy and needs --trust-proxy', env: 'AGENTPAY_TLS', allowNo: true }),
    'dev-echo-tokens': Flags.boolean({ description: 'signup and reset responses include the token (sandbox mode only)', env: 'AGENTPAY_DEV_ECHO_TOKENS' }),
    'rate-limit': positive('requests per window per key, or per IP without a key [default: 50]', 'AGENTPAY_RATE_LIMIT'),
    'rate-limit-window-ms': positive('rate-limit window in milliseconds [default: 1000]', 'AGENTPAY_RATE_LIMIT_WINDOW_MS'),
    'signup-rate-limit': positive('signup and password-recovery requests per window per IP [default: 10]', 'AGENTPAY_SIGNUP_RATE_LIMIT'),
    'signup-rate-limit-window-ms': positive('signup rate-limit window in milliseconds [default: 60000]', 'AGENTPAY_SIGNUP_RATE_LIMIT_WINDOW_MS'),
    'payment-rate-limit': positive('challenge, authorize, complete and fail requests per window per key, each operation on its own counter, apart from --rate-limit [default: 1000]', 'AGENTPAY_PAYMENT_RATE_LIMIT'),
    'payment-rate-limit-window-ms': positive('payment rate-limit window in milliseconds [default: 1000]', 'AGENTPAY_PAYMENT_RATE_LIMIT_WINDOW_MS'),
    redis: Flags.string({ description: 'redis:// URL: the rate limits count there, across every gateway using it [default: in this process]', env: 'AGENTPAY_REDIS_URL' }),
    metrics: Flags.option({ options: ['off', 'loopback', 'token'] as const, description: 'GET /metrics (Prometheus): off, loopback (this machine only), or token (authorization: Bearer $AGENTPAY_METRICS_TOKEN) [default: off]', env: 'AGENTPAY_METRICS' })(),
    rails: Flags.option({ options: ['sandbox', 'none'] as const, description: 'rail adapters: sandbox (simulated processor, chain, bank; sandbox mode only) or none [default: sandbox in sandbox mode, none in production]', env: 'AGENTPAY_RAILS' })(),
    'smtp-url': Flags.string({ description: 'send signup and password-reset mail over SMTP: smtp://user:password@host:587 (smtps:// for TLS from the start); needs --mail-from [default: mail goes to DATA_DIR/outbox.jsonl]', env: 'AGENTPAY_SMTP_URL' }),
    'mail-from': Flags.string({ description: 'the From address of that mail, e.g. "Agentpay <no-reply@example.com>"', env: 'AGENTPAY_MAIL_FROM' }),
    'log-format': Flags.option({ options: ['auto', 'pretty', 'json'] as const, description: 'log lines on stderr: auto is readable lines on a terminal, JSON (pino) when piped [default: auto]', env: 'AGENTPAY_LOG_FORMAT' })(),
    database: Flags.string({ description: 'PostgreSQL URL (postgres://user:password@host:5432/db) shared by every instance; without it, SQLite in the data dir', env: 'AGENTPAY_DATABASE_URL' }),
    'log-level': Flags.string({ description: 'fatal, error, warn, info, debug, trace or silent [default: info]', env: 'AGENTPAY_LOG_LEVEL' }),
  };

  async run(): Promise<void> {
    const { gatewayStartOptions } = await import('../../src/cli/gateway-config.js');
    const { runGateway, untilStopSignal } = await import('../../src/cli/gateway-runner.js');
    const { readyLine } = await import('../../src/cli/dev.js');
    const { removeGatewayFile } = await import('../../src/cli/local-gateway.js');
    const f = this.flags;
    const gw = await runGateway(
      gatewayStartOptions({
        config: f.config,
        mode: f.mode,
        host: f.host,
        port: f.port,
        httpPort: f['http-port'],
        dataDir: f['data-dir'],
        feeBps: f['fee-bps'],
        trustProxy: f['trust-proxy'],
        tls: f.tls,
        devEchoTokens: f['dev-echo-tokens'],
        logLevel: f['log-level'],
        logFormat: f['log-format'],
        smtpUrl: f['smtp-url'],
        mailFrom: f['mail-from'],
        rails: f.rails,
        rateLimit: f['rate-limit'],
        rateLimitWindowMs: f['rate-limit-window-ms'],
        signupRateLimit: f['signup-rate-limit'],
        signupRateLimitWindowMs: f['signup-rate-limit-window-ms'],
        paymentRateLimit: f['payment-rate-limit'],
        paymentRateLimitWindowMs: f['payment-rate-limit-window-ms'],
        redis: f.redis,
        metrics: f.metrics,
        database: f.database,
        fromEnv: this.flagsFromEnv(),
      }),
    );
    // listening for SIGINT/SIGTERM before saying ready: a supervisor may stop it the moment it reads the line
    const stopSignal = untilStopSignal(() => removeGatewayFile(gw.ready.dataDir));
    if (f.json) process.stdout.write(readyLine(gw.ready) + '\n');
    else process.stdout.write(`agentpay gateway (${gw.config.mode}) listening on ${gw.ready.baseUrl}${gw.ready.httpUrl ? ` (plain HTTP ${gw.ready.httpUrl})` : ''}\n`);
    const signal = await stopSignal;
    gw.log.info({ signal }, 'stopping');
    await gw.stop();
    this.exit(0);
  }
}
