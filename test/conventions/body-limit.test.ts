/**
 * The request body limit: a body over 1 MiB is refused with 413 PAYLOAD_TOO_LARGE naming
 * the limit and what to do, whether its size is announced (content-length) or only found
 * out while streaming it; nothing is written. A body of exactly 1 MiB is not refused for size.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startTestGateway } from '../helpers/gateway.js';
import { call, changedTables, snapshotDb } from '../helpers/matrix.js';

const LIMIT = 1024 * 1024;
const t = await startTestGateway();
afterAll(() => t.close());

/** A wallet-creation body whose JSON text is exactly `bytes` long. */
function walletBodyOfSize(bytes: number): { ownerType: string; ownerId: string } {
  const frame = JSON.stringify({ ownerType: 'workspace', ownerId: '' }).length;
  const body = { ownerType: 'workspace', ownerId: 'x'.repeat(bytes - frame) };
  expect(Buffer.byteLength(JSON.stringify(body))).toBe(bytes);
  return body;
}

function expectTooLarge(res: { status: number; body: { error?: { code: string; message: string; details: Record<string, unknown> } } }) {
  expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(413);
  expect(res.body.error?.code).toBe('PAYLOAD_TOO_LARGE');
  expect(res.body.error?.message).toMatch(/^body: .*1 MiB.*send a smaller body/);
  expect(res.body.error?.details).toEqual({ field: 'body', limitBytes: LIMIT });
}

describe('a request body over the 1 MiB limit', () => {
  it('is refused with 413 PAYLOAD_TOO_LARGE naming the limit and what to do, and writes nothing', async () => {
    const before = snapshotDb(t.dataDir);
    const res = await call(t, 'POST', '/v1/wallets', { apiKey: t.creds.workspace.apiKey, body: walletBodyOfSize(LIMIT + 1) });
    expectTooLarge(res);
    expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
  });

  it('is refused the same way when it is streamed without a content-length', async () => {
    const f = await t.client().http.fetcher();
    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode('{"ownerType":"workspace","ownerId":"'));
        if (sent > 2 * LIMIT) return controller.close();
        controller.enqueue(chunk);
        sent += chunk.length;
      },
    });
    const before = snapshotDb(t.dataDir);
    const res = await f(`${t.baseUrl}/v1/wallets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': t.creds.workspace.apiKey },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expectTooLarge({ status: res.status, body: (await res.json()) as never });
    expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
  });
});

describe('a request body of exactly 1 MiB', () => {
  it('is not refused for its size (it reaches validation)', async () => {
    const res = await call(t, 'POST', '/v1/wallets', { apiKey: t.creds.workspace.apiKey, body: walletBodyOfSize(LIMIT) });
    expect(res.status).not.toBe(413);
    expect(res.body.error?.code).not.toBe('PAYLOAD_TOO_LARGE');
  });
});
