/**
 * The built `agentpay` binary against a real test gateway, run as test/cli runs it
 * (`agentpay ARGS --json` in its own process, a private config dir), with the connection
 * in the environment. Each run costs a Node start-up, so tests check state through the
 * SDK and use the CLI for what they test.
 */
import { rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { caPath } from '../../../src/cli/local-gateway.js';
import { agentpaySeller } from '../../../packages/sdk/src/seller/fastify.js';
import { cli, json, tempDir, type CliResult } from '../helpers.js';
import type { TestGateway } from '../../helpers/gateway.js';
import type { PublishedCapability } from '../../../packages/sdk/src/types.js';

export interface Cli {
  /** a temp dir for the run's cwd, config and files the test writes */
  dir: string;
  /** runs `agentpay ARGS --json` with the given key (default: the dev workspace's) */
  run(args: readonly string[], opts?: { key?: string }): Promise<CliResult>;
  /** runs and parses stdout as JSON, failing with the output if the command failed */
  json<T = Record<string, unknown>>(args: readonly string[], opts?: { key?: string }): Promise<T>;
  /** writes a file into `dir` and returns its path */
  file(name: string, content: string, mode?: number): string;
  close(): void;
}

export function cliFor(t: TestGateway): Cli {
  const dir = tempDir('agentpay-cli-market-');
  const run = (args: readonly string[], opts: { key?: string } = {}) =>
    cli([...args, '--json'], {
      configDir: dir, // also the cwd: no ./.agentpay there, the connection comes from the environment
      env: { AGENTPAY_GATEWAY_URL: t.baseUrl, AGENTPAY_API_KEY: opts.key ?? t.creds.workspace.apiKey, AGENTPAY_CA: caPath(t.dataDir) },
    });
  return {
    dir,
    run,
    async json<T>(args: readonly string[], opts: { key?: string } = {}): Promise<T> {
      const r = await run(args, opts);
      if (r.exitCode !== 0) throw new Error(`agentpay ${args.join(' ')} exited ${r.exitCode}\n${r.stdout}\n${r.stderr}`);
      return json<T>(r);
    },
    file(name, content, mode) {
      const path = join(dir, name);
      writeFileSync(path, content, mode === undefined ? undefined : { mode });
      return path;
    },
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The error envelope a failed command prints on stdout with --json. */
export function errorOf(r: CliResult): { code: string; message: string; details: Record<string, unknown> } {
  return (JSON.parse(r.stdout) as { error: { code: string; message: string; details: Record<string, unknown> } }).error;
}

/** What a CliSeller's GET /bytes answers: every byte value, invalid UTF-8, a CR LF and a NUL, no trailing newline. */
export const BINARY_BODY: Uint8Array = Uint8Array.from([0xff, 0xfe, 0x00, 0x0d, 0x0a, 0xc3, 0x28, ...Array.from({ length: 256 }, (_, i) => i), 0x80]);

export interface CliSeller {
  /** https://127.0.0.1:PORT */
  url: string;
  app: FastifyInstance;
  /** handler runs per route */
  handled: Record<string, number>;
  /** registers the paid routes once the capability (whose endpoint is `url`/forecast) exists */
  sell(capabilityId: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * A fastify seller over HTTPS on 127.0.0.1 with the seller middleware and the dev
 * provider's key. It listens before its capability exists, so that the capability can
 * be published (by the CLI) with the seller's real endpoint: the server hands requests
 * to the fastify router once `sell` has declared the paid routes.
 *   POST /forecast  paid, echoes the city it was sent
 *   GET  /broken    paid, answers 503 (a provider error: refunded, counts toward the breaker)
 *   GET  /bytes     paid, answers BINARY_BODY (application/octet-stream, not UTF-8)
 */
export async function startCliSeller(t: TestGateway): Promise<CliSeller> {
  const handled: Record<string, number> = {};
  const count = (route: string) => (handled[route] = (handled[route] ?? 0) + 1);
  const app = Fastify();
  let ready = false;
  const server = https.createServer({ cert: t.gw.tls!.cert, key: t.gw.tls!.key }, (req, res) => {
    if (ready) return app.routing(req, res);
    res.statusCode = 503;
    res.end('not selling yet');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    app,
    handled,
    async sell(capabilityId) {
      await app.register(agentpaySeller, { gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, capabilityId, onError: () => {} });
      app.post<{ Body: { city?: string } }>('/forecast', async (request) => {
        count('forecast');
        return { city: request.body?.city ?? 'Lisbon', sunny: true };
      });
      app.get('/bytes', async (_request, reply) => {
        count('bytes');
        return reply.type('application/octet-stream').send(Buffer.from(BINARY_BODY));
      });
      app.get('/broken', async (_request, reply) => {
        count('broken');
        return reply.code(503).send({ error: { code: 'UPSTREAM_DOWN', message: 'weather service down' } });
      });
      await app.ready();
      ready = true;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await app.close();
    },
  };
}

/** A CLI seller on the market: `agentpay publish` (the dev provider's key) lists its /forecast at `priceMinor`, then it sells. */
export async function publishedCliSeller(t: TestGateway, cli: Cli, listing: { name: string; description: string; priceMinor: string }): Promise<{ seller: CliSeller; capabilityId: string }> {
  const seller = await startCliSeller(t);
  const published = await cli.json<PublishedCapability>([
    'publish', '--name', listing.name, '--description', listing.description, '--protocol', 'rest',
    '--price', listing.priceMinor, '--category', 'weather', '--endpoint', `${seller.url}/forecast`,
  ], { key: t.creds.provider.apiKey });
  await seller.sell(published.capability.id);
  return { seller, capabilityId: published.capability.id };
}
