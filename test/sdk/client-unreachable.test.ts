/**
 * The typed API client when the gateway gives no answer at all: a refused connection, a
 * certificate it does not trust, a fetch that throws. Each is an AgentpayError
 * GATEWAY_UNAVAILABLE with no status, the network error kept as its cause; an aborted
 * request stays the caller's abort.
 */
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentpayClient } from '../../packages/sdk/src/client/index.js';
import { AgentpayError } from '../../packages/sdk/src/errors.js';
import { describeError, EXIT } from '../../src/cli/errors/index.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/** A loopback port nobody listens on (taken, then released). */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as { port: number };
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

async function caught(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway();
});
afterAll(async () => {
  await t?.close();
});

describe('AgentpayClient without an answer from the gateway', () => {
  it('reports a refused connection as GATEWAY_UNAVAILABLE naming the address and ECONNREFUSED', async () => {
    const port = await closedPort();
    const client = new AgentpayClient({ gatewayUrl: `https://127.0.0.1:${port}`, apiKey: t.creds.workspace.apiKey });
    const e = await caught(client.wallets.list());
    expect(e).toBeInstanceOf(AgentpayError);
    expect(e).toMatchObject({ code: 'GATEWAY_UNAVAILABLE', status: undefined, details: { url: `https://127.0.0.1:${port}`, cause: 'ECONNREFUSED' } });
    expect((e as Error).message).toContain(`https://127.0.0.1:${port}`);
    expect((e as Error).cause).toBeDefined();
    // the CLI reads it as it read fetch's TypeError: unreachable, exit 3
    expect(describeError(e, { baseUrl: `https://127.0.0.1:${port}` })).toMatchObject({ code: 'GATEWAY_UNREACHABLE', exit: EXIT.UNREACHABLE });
  });

  it('reports an untrusted certificate with its TLS code, which the CLI turns into a CA hint', async () => {
    const client = new AgentpayClient({ gatewayUrl: t.baseUrl, apiKey: t.creds.workspace.apiKey }); // no ca
    const e = await caught(client.wallets.list());
    expect(e).toMatchObject({ code: 'GATEWAY_UNAVAILABLE', status: undefined });
    expect(String((e as AgentpayError).details.cause)).toMatch(/CERT|SELF_SIGNED|UNABLE_TO_VERIFY/);
    expect(describeError(e, { baseUrl: t.baseUrl })).toMatchObject({ code: 'TLS_FAILED', exit: EXIT.UNREACHABLE });
  });

  it('wraps a custom fetch that throws the same way, and still answers with the gateway when it works', async () => {
    const failing = new AgentpayClient({ gatewayUrl: t.baseUrl, apiKey: t.creds.workspace.apiKey, fetch: async () => { throw new TypeError('fetch failed', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) }); } });
    expect(await caught(failing.wallets.list())).toMatchObject({ code: 'GATEWAY_UNAVAILABLE', details: { cause: 'ECONNRESET' } });
    const working = new AgentpayClient({ gatewayUrl: t.baseUrl, apiKey: t.creds.workspace.apiKey, ca: t.ca });
    expect(Array.isArray(await working.wallets.list())).toBe(true);
  });

  it('keeps an aborted request as the caller’s abort, not a gateway failure', async () => {
    const client = new AgentpayClient({ gatewayUrl: t.baseUrl, apiKey: t.creds.workspace.apiKey, ca: t.ca });
    const ac = new AbortController();
    ac.abort(new Error('stopped by the caller'));
    const e = await caught(client.http.request('GET', '/v1/wallets', { signal: ac.signal }));
    expect(e).not.toBeInstanceOf(AgentpayError);
    expect((e as Error).message).toBe('stopped by the caller');
  });
});

describe('AgentpayClient.close()', () => {
  // a gateway of its own: no other client's connections
  let own: TestGateway;
  beforeAll(async () => {
    own = await startTestGateway();
  });
  afterAll(async () => {
    await own?.close();
  });
  const connections = () => new Promise<number>((resolve, reject) => own.gw.app.server.getConnections((e, n) => (e ? reject(e) : resolve(n))));

  it("ends the client's kept-alive connections (the gateway sees them go), and a closed client makes no more requests", async () => {
    const client = new AgentpayClient({ gatewayUrl: own.baseUrl, ca: own.ca, env: false });
    await Promise.all([client.platform.health(), client.platform.health(), client.platform.publicKey()]);
    // kept alive after the answers: the gateway keeps idle connections for 72 s
    expect(await connections()).toBeGreaterThan(0);
    await client.close();
    // the gateway sees the close when it reads the end of the stream: a few turns of its event loop
    for (let i = 0; i < 200 && (await connections()) > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(await connections()).toBe(0);
    const e = await caught(client.platform.health());
    expect(e).toBeInstanceOf(AgentpayError);
    expect((e as AgentpayError).code).toBe('GATEWAY_UNAVAILABLE');
  });

  it('waits for the requests under way: they get their answers', async () => {
    const client = new AgentpayClient({ gatewayUrl: own.baseUrl, ca: own.ca, env: false });
    const health = client.platform.health();
    await client.close();
    await expect(health).resolves.toMatchObject({ status: expect.any(String) });
  });
});
