/**
 * startGateway's close(): a client that holds a connection without ever sending a request
 * cannot hold the close forever (requests under way get `closeGraceMs` to finish first).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway } from '../../src/gateway/server.js';
import { backendOptions } from '../helpers/gateway.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function gateway(closeGraceMs: number) {
  const dataDir = mkdtempSync(join(tmpdir(), 'agentpay-close-'));
  dirs.push(dataDir);
  const gw = await startGateway({ ...(await backendOptions(dataDir)), dataDir, port: 0, httpPort: null, closeGraceMs });
  const ca = readFileSync(join(dataDir, 'tls', 'ca.pem'), 'utf8');
  const open = (): Promise<TLSSocket> => new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: Number(new URL(gw.baseUrl).port), ca }, () => resolve(socket));
    socket.on('error', reject);
  });
  return { gw, open };
}

describe('close()', () => {
  it('cuts a connection that never sent a request once the grace time is over, and closes', async () => {
    const { gw, open } = await gateway(200);
    const idle = await open(); // TLS handshake done, no request: neither busy nor idle to the HTTP server
    const closedBy = new Promise<void>((resolve) => idle.on('close', () => resolve()));
    const started = Date.now();
    await gw.close();
    await closedBy;
    expect(Date.now() - started).toBeLessThan(5000); // without the cut: never (the test would time out)
    expect(idle.destroyed).toBe(true);
  });

});
