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
import { privateKeyDir, tightenPrivateKeyDir } from '../domain/signing-keys.js';
import { databasePath, refuseLostDatabase } from './lost-database.js';
import { OutboxMailer, outboxPath } from '../domain/mailer.js';
import { ensurePlatform } from '../domain/tenants.js';
import { ensureWebhookSecret } from '../domain/rails/sandbox/secret.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { buildApp } from './app.js';
import { plainClientErrorHandler } from './plugins/errors.js';
import { claimDataDirMode } from './data-mode.js';
import { resolveConfig, type GatewayConfig } from './config.js';
import { buildServices, type Services } from './services.js';
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
  /** how commits reach the disk (SqliteStoreOptions.durability; default 'background') */
  durability?: 'background' | 'in-commit';
  /** how often the server certificate is checked and renewed while running (ms; default one hour, 0 never) */
  tlsCheckIntervalMs?: number;
  /** how often the current signing key is re-read, to follow rotations by other instances (ms; default 30 s, 0 never) */
  signingKeyRefreshMs?: number;
  /**
   * close(): how long requests under way get to finish before every connection is cut (ms;
   * default 5 s). Without it, a client holding a connection that never sends a request (an idle
   * TLS socket) would hold the close forever.
   */
  closeGraceMs?: number;
}

export interface RunningGateway {
  app: FastifyInstance;
  services: Services;
  store: SqliteStore;
  /** what the HTTPS server serves now (renewals included); null without TLS */
  tls: TlsMaterial | null;
  /** the running certificate check; null without TLS */
  tlsRenewal: TlsRenewal | null;
  baseUrl: string;
  httpUrl: string | null;
  dataDir: string;
  close(): Promise<void>;
}

export async function startGateway(opts: StartGatewayOptions): Promise<RunningGateway> {
  const dataDir = resolve(opts.dataDir);
  // made 0700 when new; an existing one (it may be the user's working directory) is left as it is
  ensurePrivateDir(dataDir);
  const host = opts.host ?? '127.0.0.1';
  const config = resolveConfig(opts.config);
  // the sandbox processor signs its webhooks with a secret kept in the data directory
  if (config.mode === 'sandbox' && (config.rails?.adapters ?? 'sandbox') === 'sandbox' && !config.rails?.webhookSecret) {
    config.rails = { ...config.rails, webhookSecret: ensureWebhookSecret(dataDir) };
  }
  const clock = opts.clock ?? systemClock;
  const ids = opts.ids ?? randomIds;
  const useTls = opts.tls ?? true;

  refuseLostDatabase(dataDir);
  const store = new SqliteStore({ path: databasePath(dataDir), ...(opts.durability ? { durability: opts.durability } : {}) });
  try {
    claimDataDirMode(dataDir, config.mode, store.raw);
    const ctx = { store, clock, ids };
    await store.tx((r) => ensurePlatform(r, ctx));
    const keyDir = tightenPrivateKeyDir(dataDir); // before a private key is read from it; logged once the app has a logger
    const services = await buildServices(ctx, config, privateKeyDir(dataDir), new OutboxMailer(outboxPath(dataDir), clock));
    const tls = useTls ? await ensureTls(dataDir) : null;

    let plain: http.Server | null = null;
    const app = await buildApp({
      services,
      logger: opts.logger ?? false,
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
    if (keyDir) {
      const found = { dir: keyDir.dir, previousMode: keyDir.previousMode.toString(8).padStart(4, '0') };
      if (keyDir.tightened) app.log.warn(found, 'the signing keys directory was open to other users; made it 0700 (owner only)');
      else app.log.warn({ ...found, cause: keyDir.error }, 'the signing keys directory is open to other users and could not be made 0700; make it owner-only (chmod 700)');
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
    services.sweeper.start(config.sweepIntervalMs, (err) => app.log.error({ err }, 'expiry sweep failed'));
    services.rails.jobs.start(services.rails.settings.pollIntervalMs, (err) => app.log.error({ err }, 'rail job failed'));
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
      get tls() {
        return tlsRenewal?.current ?? null;
      },
      tlsRenewal,
      baseUrl,
      httpUrl,
      dataDir,
      async close() {
        await services.sweeper.stop();
        await services.rails.jobs.stop();
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
        await store.close();
      },
    };
  } catch (e) {
    await store.close();
    throw e;
  }
}
