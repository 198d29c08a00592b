/**
 * Behind a TLS-terminating proxy (`trustProxy`), exactly one hop is trusted: the client is the
 * address the proxy appended to x-forwarded-for, so a client that writes its own
 * x-forwarded-for entries cannot choose the IP the per-IP limits count (signup, login).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../src/gateway/server.js';
import { backendOptions } from '../helpers/gateway.js';

let gw: RunningGateway;
const dataDir = mkdtempSync(join(tmpdir(), 'agentpay-trust-proxy-'));
beforeAll(async () => {
  gw = await startGateway({ ...(await backendOptions(dataDir)), dataDir, tls: false, httpPort: null, port: 0, config: { trustProxy: true, rateLimit: { max: 1000, windowMs: 60_000, signupMax: 2, signupWindowMs: 60_000 } } });
});
afterAll(async () => {
  await gw?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A signup as the proxy forwards it: whatever the client sent in x-forwarded-for, then the client's real address. */
const signup = (i: number, forwardedFor: string) =>
  fetch(`${gw.baseUrl}/v1/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-proto': 'https', 'x-forwarded-for': forwardedFor },
    body: JSON.stringify({ kind: 'workspace', name: `Spoof ${i}`, email: `spoof${i}@example.test`, password: 'long enough password' }),
  }).then((r) => r.status);

describe('trustProxy', () => {
  it('counts the signup limit per real client address, whatever x-forwarded-for entries the client made up', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push(await signup(i, `10.0.0.${i}, 203.0.113.7`));
    expect(statuses).toEqual([200, 200, 429, 429, 429]);
    // another real client has its own budget
    expect(await signup(9, '198.51.100.9')).toBe(200);
  });
});
