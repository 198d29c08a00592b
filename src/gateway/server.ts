/**
 * Starts a gateway: the store, the services, one app served on an HTTPS listener
 * and on a plain listener that refuses everything with 403 INSECURE_TRANSPORT.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../core/clock.js';
import { systemClock } from '../core/clock.js';
import { ensurePrivateDir } from '../core/files.js';
import { randomIds, type IdGenerator } from '../core/ids.js';
import { privateKeyDir, tightenPrivateKeyDir, type KeyStorage } from '../domain/payments/signing-keys.js';
import { keyEncryptionKeysFrom } from '../domain/payments/key-sealing.js';
import { databasePath, refuseLostDatabase } from './lost-database.js';
import { OutboxMailer, outboxPath } from '../domain/platform/mailer.js';
import { ensurePlatform } from '../domain/tenancy/tenants.js';
import { ensureWebhookSecret } from '../rails/sandbox/secret.js';
import { ensureWebhookKey } from '../domain/platform/webhooks/secrets.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { PgStore } from '../store/pg/pg-store.js';
import { buildApp } from './app.js';
import { plainClientErrorHandler } from './plugins/errors.js';
import { redactUrl } from '../store/errors.js';
import { GatewayMetrics, instrumentServices } from './metrics.js';
import { openSharedCounter, redactRedisUrl, type RateCounter } from './rate-counter.js';
import { claimDataDirMode } from './data-mode.js';
import { resolveConfig, type GatewayConfig } from './config.js';
import { buildServices, type Services } from './services.js';
import { RequestLogFile, requestLogPath } from './request-log.js';
import { MailSpool, mailSpoolDir, type SpoolLog } from './mail/spool.js';
import { SmtpTransport } from './mail/smtp.js';
import { redactSmtpUrl, scrubSecret } from './mail/settings.js';
import { ensureTls, serverTlsOptions, TlsRenewal, type TlsMaterial } from './tls.js';

export interface StartGatewayOptions {
  dataDir: string;
  host?: string;
  port?: number;
  /** plain-HTTP port; null for none */
  httpPort?: number | null;
  /** serve plain HTTP only (behind a TLS-terminating proxy with trustProxy) */
  tls?: boolean;
  config?: Partial<GatewayConfig>;
  clock?: Clock;
  ids?: IdGenerator;
  /** pino options or false */
  logger?: boolean | object;
  /**
   * A PostgreSQL URL (postgres://user:password@host:5432/db): the database of a fleet of
   * instances (docs/deploy.md). Without it, SQLite in the data directory.
   */
  database?: string;
  /** how commits reach the disk (SqliteStoreOptions.durability; default 'background'; SQLite only) */
  durability?: 'background' | 'in-commit';
  /** how often the server certificate is checked and renewed while running (ms; default one hour, 0 never) */
  tlsCheckIntervalMs?: number;
  /** how often the ledger-checkpoint duty signs the chains' heads when they moved (default 10 minutes; docs/ledger.md) */
  ledgerCheckpointIntervalMs?: number;
  /** how often the current signing key is re-read, to follow rotations by other instances (ms; default 30 s, 0 never) */
  signingKeyRefreshMs?: number;
  /**
   * close(): how long requests under way get to finish before every connection is cut (ms;
   * default 5 s). Without it, a client holding a connection that never sends a request (an idle
   * TLS socket) would hold the close forever.
   */
  closeGraceMs?: number;
  /** append each request's log entry to DATA_DIR/logs/requests.jsonl, rotated by size (default off) */
  requestLog?: boolean;
}

export interface RunningGateway {
  app: FastifyInstance;
  services: Services;
  store: SqliteStore | PgStore;
  /** this gateway's metrics (GET /metrics when config.metrics allows it); others count on them, e.g. webhookDeliveryFailures.inc() */
  metrics: GatewayMetrics;
  /** what the HTTPS server serves now (renewals included); null without TLS */
  tls: TlsMaterial | null;
  /** the running certificate check; null without TLS */
  tlsRenewal: TlsRenewal | null;
  /** the SMTP mail spool when mail is configured; null when mail goes to DATA_DIR/outbox.jsonl */
  mail: MailSpool | null;
  baseUrl: string;
  httpUrl: string | null;
  dataDir: string;
  close(): Promise<void>;
}

export async function startGateway(opts: StartGatewayOptions): Promise<RunningGateway> {
  const dataDir = resolve(opts.dataDir);
  const config = resolveConfig(opts.config);
  // where the signing keys' private halves go: sealed in the database with the operator's key-encryption
  // key; without one, in clear in the database of a sandbox fleet, else in DATA_DIR/keys (a wrong key
  // stops the start here, before anything is made)
  const keks = keyEncryptionKeysFrom(config.keyEncryption);
  const keyStorage: KeyStorage = keks ? { kind: 'sealed', keks } : opts.database && config.mode === 'sandbox' ? { kind: 'clear' } : { kind: 'files' };
  // made 0700 when new; an existing one (it may be the user's working directory) is left as it is
  ensurePrivateDir(dataDir);
  const host = opts.host ?? '127.0.0.1';
  // the sandbox processor signs its webhooks with a secret kept in the data directory
  if (config.mode === 'sandbox' && (config.rails?.adapters ?? 'sandbox') === 'sandbox' && !config.rails?.webhookSecret) {
    config.rails = { ...config.rails, webhookSecret: ensureWebhookSecret(dataDir) };
  }
  // endpoint secrets are encrypted with this key (AGENTPAY_WEBHOOK_KEY, else one kept in the data directory)
  if (!config.webhooks?.secretKey) config.webhooks = { ...config.webhooks, secretKey: ensureWebhookKey(dataDir).toString('base64') };
  const clock = opts.clock ?? systemClock;
  const ids = opts.ids ?? randomIds;
  const useTls = opts.tls ?? true;

  let requestLog: RequestLogFile | undefined;
  let rateCounter: RateCounter | undefined;
  let store: SqliteStore | PgStore;
  if (opts.database) {
    store = await PgStore.open({ url: opts.database });
  } else {
    refuseLostDatabase(dataDir);
    store = new SqliteStore({ path: databasePath(dataDir), ...(opts.durability ? { durability: opts.durability } : {}) });
  }
  let mail: MailSpool | null = null;
  try {
    await claimDataDirMode(dataDir, config.mode, { hasSandboxMoney: () => store.hasSandboxMoney(), ...(opts.database ? { database: redactUrl(opts.database) } : {}) });
    const metrics = new GatewayMetrics({
      now: () => clock.now(),
      holdsOutstanding: () => store.read((r) => r.transactions.holdsOutstanding()),
      sessionHolds: () => store.read((r) => r.sessions.holdsOutstanding()),
      processMetrics: (config.metrics?.mode ?? 'off') !== 'off',
    });
    // both stores report commit times (SQLite also its log syncs)
    store.observer = metrics.storeObserver();
    const ctx = { store, clock, ids, observer: metrics.domainObserver() };
    await store.tx((r) => ensurePlatform(r, ctx));
    const keyDir = tightenPrivateKeyDir(dataDir); // before a private key is read from it; logged once the app has a logger
    // mail over SMTP goes through a spool in the data dir; its log is the app's once there is one
    let mailLog: SpoolLog | undefined;
    const smtp = config.mail;
    if (smtp) {
      mail = new MailSpool({
        dir: mailSpoolDir(dataDir),
        transport: new SmtpTransport(smtp.smtpUrl),
        from: smtp.from,
        clock,
        log: { info: (o, m) => mailLog?.info(o, m), warn: (o, m) => mailLog?.warn(o, m), error: (o, m) => mailLog?.error(o, m) },
        describe: (err) => scrubSecret(String((err as Error)?.message ?? err), smtp.smtpUrl),
      });
    }
    const services = await buildServices(ctx, config, privateKeyDir(dataDir), mail ?? new OutboxMailer(outboxPath(dataDir), clock), keyStorage);
    instrumentServices(services, metrics);
    const tls = useTls ? await ensureTls(dataDir) : null;
    let log: FastifyInstance['log'] | undefined;
    rateCounter = config.redis ? await openSharedCounter({
      url: config.redis.url,
      keyPrefix: config.redis.keyPrefix ?? 'agentpay:rl:',
      clock,
      events: {
        down: (err) => log?.warn({ redis: redactRedisUrl(config.redis!.url), cause: err.message }, 'Redis does not answer: the rate limits count in this process until it does (each instance up to the limit)'),
        up: () => log?.info({ redis: redactRedisUrl(config.redis!.url) }, 'Redis answers again: the rate limits count across the fleet again'),
      },
    }) : undefined;

    let plain: http.Server | null = null;
    if (opts.requestLog) requestLog = new RequestLogFile(requestLogPath(dataDir));
    const app = await buildApp({
      services,
      logger: opts.logger ?? false,
      ...(rateCounter ? { rateCounter } : {}),
      metrics,
      ...(requestLog ? { requestLog } : {}),
      // behind a proxy over plain HTTP, a balancer's health check reaches the instance without x-forwarded-proto
      healthOverPlainHttp: !tls,
      serverFactory: (handler) => {
        // a request without Host reaches the app, which refuses it in the envelope (plugins/errors.ts)
        const main = tls ? https.createServer({ ...serverTlsOptions(tls), requireHostHeader: false }, handler) : http.createServer({ requireHostHeader: false }, handler);
        // the refuse-only listener: with trustProxy a forged x-forwarded-proto must not open it
        if (opts.httpPort !== null && tls) {
          plain = http.createServer({ requireHostHeader: false }, (req, res) => {
            delete req.headers['x-forwarded-proto'];
            handler(req, res);
          });
          plain.on('clientError', plainClientErrorHandler);
        }
        return main;
      },
    });
    log = app.log;
    if (keyDir) {
      const found = { dir: keyDir.dir, previousMode: keyDir.previousMode.toString(8).padStart(4, '0') };
      if (keyDir.tightened) app.log.warn(found, 'the signing keys directory was open to other users; made it 0700 (owner only)');
      else app.log.warn({ ...found, cause: keyDir.error }, 'the signing keys directory is open to other users and could not be made 0700; make it owner-only (chmod 700)');
    }
    logKeyStorage(app.log, keyStorage, services, Boolean(opts.database));
    if (mail && smtp) {
      mailLog = app.log;
      app.log.info({ smtp: redactSmtpUrl(smtp.smtpUrl), from: smtp.from, spool: mailSpoolDir(dataDir) }, 'mail goes out over SMTP');
      mail.start(); // what a previous run left in the spool
    }
    await app.listen({
      host,
      port: opts.port ?? 4402,
      // fastify names the scheme from its own options and cannot see the HTTPS server made above
      listenTextResolver: (address) => `Server listening at ${tls ? address.replace(/^http:/, 'https:') : address}`,
    });
    const port = (app.server.address() as AddressInfo).port;
    let httpUrl: string | null = null;
    if (plain) {
      const p: http.Server = plain;
      await new Promise<void>((res, rej) => {
        p.once('error', rej);
        p.listen(opts.httpPort ?? 4080, host, () => res());
      });
      httpUrl = `http://${host}:${(p.address() as AddressInfo).port}`;
    }
    // fleet duties: on PostgreSQL one instance at a time runs each (Store.claimDuty); on SQLite this one
    services.sweeper.start(config.sweepIntervalMs, (err) => app.log.error({ err }, 'expiry sweep failed'), dutyOf(store, 'sweeper', app.log));
    services.rails.jobs.start(services.rails.settings.pollIntervalMs, (err) => app.log.error({ err }, 'rail job failed'), dutyOf(store, 'rail-jobs', app.log));
    // x402 `exact`: failed settlements retried, crashed ones taken up, settled ones reconciled (at the rail job's pace)
    services.x402Exact.startSettlementDuty(services.rails.settings.pollIntervalMs, (err) => app.log.error({ err }, 'x402 settlement duty failed; tried again at the next run'), dutyOf(store, 'x402-settlements', app.log));
    services.webhookDeliverer.start(config.webhooks?.deliveryIntervalMs ?? 2000, (err) => app.log.error({ err }, 'webhook delivery run failed'), dutyOf(store, 'webhooks', app.log));
    services.alertMailer.start(config.alertMailIntervalMs ?? 5000, (err) => app.log.error({ err }, 'alert mail run failed'), dutyOf(store, 'alert-mail', app.log));
    services.retention.start((err) => app.log.error({ err }, 'retention run failed; tried again at the next run'), dutyOf(store, 'retention', app.log));
    services.ledgerCheckpoints.start(opts.ledgerCheckpointIntervalMs ?? 10 * 60 * 1000, (err) => app.log.error({ err }, 'ledger checkpoint failed; tried again at the next run'), dutyOf(store, 'ledger-checkpoints', app.log));
    const tlsRenewal = tls ? new TlsRenewal(dataDir, app.server as https.Server, tls, app.log) : null;
    tlsRenewal?.start(opts.tlsCheckIntervalMs ?? 60 * 60 * 1000, (err) =>
      app.log.error({ err }, 'TLS certificate check failed; the current certificate stays in use, tried again at the next check'),
    );
    services.signingKeys.startRefresh(opts.signingKeyRefreshMs ?? 30_000, (err) =>
      app.log.error({ err, signingKeyId: services.signingKeys.currentKeyId }, 'signing key refresh failed; the current key stays in use, tried again next time'),
    );
    const baseUrl = `${tls ? 'https' : 'http'}://${host}:${port}`;
    return {
      app,
      services,
      store,
      metrics,
      get tls() {
        return tlsRenewal?.current ?? null;
      },
      tlsRenewal,
      mail,
      baseUrl,
      httpUrl,
      dataDir,
      async close() {
        await services.sweeper.stop();
        await services.rails.jobs.stop();
        await services.x402Exact.stopSettlementDuty();
        await services.webhookDeliverer.stop();
        await services.alertMailer.stop();
        await services.retention.stop();
        await services.ledgerCheckpoints.stop();
        await tlsRenewal?.stop();
        await services.signingKeys.stopRefresh();
        if (plain) {
          const p: http.Server = plain;
          p.closeAllConnections?.();
          await new Promise<void>((res) => p.close(() => res()));
        }
        const cut = setTimeout(() => app.server.closeAllConnections?.(), opts.closeGraceMs ?? 5000);
        try {
          await app.close();
        } finally {
          clearTimeout(cut);
        }
        await rateCounter?.close();
        await requestLog?.close();
        await mail?.close();
        await store.close();
      },
    };
  } catch (e) {
    await rateCounter?.close();
    await requestLog?.close();
    await mail?.close();
    await store.close();
    throw e;
  }
}

/** Says where the signing keys' private halves are, and what the start imported or sealed again (ids, never a key). */
function logKeyStorage(log: FastifyInstance['log'], storage: KeyStorage, services: Services, shared: boolean): void {
  const { imported, resealed, skipped } = services.signingKeys.report;
  const signingKeyId = services.signingKeys.currentKeyId;
  if (storage.kind === 'sealed') log.info({ signingKeyId, keyEncryptionKeyId: storage.keks.sealingId, readable: storage.keks.ids }, 'signing keys are kept in the database, sealed with the key-encryption key');
  if (storage.kind === 'clear') log.warn({ signingKeyId }, 'signing keys are kept in the database unsealed (a sandbox without a key-encryption key); set AGENTPAY_KEY_ENCRYPTION_KEY to seal them');
  if (storage.kind === 'files' && shared) log.warn({ signingKeyId }, 'signing keys are kept in DATA_DIR/keys: every instance on this database needs that same directory; set AGENTPAY_KEY_ENCRYPTION_KEY to keep them in the database, sealed, instead');
  if (imported.length) log.info({ signingKeyIds: imported, sealed: storage.kind === 'sealed' }, `imported ${imported.length} signing key(s) from DATA_DIR/keys into the database; the files are left in place`);
  if (resealed.length) log.info({ signingKeyIds: resealed, keyEncryptionKeyId: storage.kind === 'sealed' ? storage.keks.sealingId : undefined }, `sealed ${resealed.length} signing key(s) again with the key-encryption key that seals now`);
  for (const s of skipped) log.warn(s, 'a retired signing key was left as it is');
}

/** A duty's gate for Periodic: whether this instance holds it now, logged when that changes. */
function dutyOf(store: SqliteStore | PgStore, name: string, log: FastifyInstance['log']): () => Promise<boolean> {
  let held = false;
  return async () => {
    const now = await store.claimDuty(name);
    if (now !== held && store instanceof PgStore) log.info({ duty: name }, now ? 'took the fleet duty; this instance runs it' : 'lost the fleet duty; another instance runs it');
    held = now;
    return now;
  };
}
