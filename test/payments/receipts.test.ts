import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, ManualClock, type TestGateway } from '../helpers/gateway.js';
import type { AgentpayClient, Receipt } from '../../packages/sdk/src/client/index.js';
import { mintKey } from '../helpers/matrix.js';
import { authorizeCall, createCapability, newBuyer, paidCall, refused, type Buyer } from './helpers.js';

const clock = new ManualClock(Date.UTC(2026, 10, 21, 10, 0, 0));
let t: TestGateway;
let seller: { id: string; client: AgentpayClient; capabilityId: string };
let ws: { id: string; client: AgentpayClient };
let buyer: Buyer;
/** the workspace's receipts, newest first */
const made: Receipt[] = [];

beforeAll(async () => {
  t = await startTestGateway({ clock });
  const s = await t.newProvider();
  seller = { ...s, capabilityId: await createCapability(t, s.id, { priceMinor: '10' }) };
  ws = await t.newWorkspace('Receipts Workspace');
  buyer = await newBuyer(t, ws.client, '1000');
  const buyer2 = await newBuyer(t, ws.client, '1000');
  for (let i = 0; i < 7; i++) {
    clock.advance(1000);
    made.unshift(await paidCall(seller.client, seller.capabilityId, i % 2 ? buyer2 : buyer, `body ${i}`));
  }
  // a failed call: its failed receipt is listed too
  clock.advance(1000);
  const auth = await authorizeCall(seller.client, seller.capabilityId, buyer);
  made.unshift((await seller.client.payments.fail({ transactionId: auth.transactionId, reason: 'provider_error' })).receipt);
});
afterAll(async () => {
  await t.close();
});

describe('GET /v1/receipts', () => {
  it('lists a workspace\'s purchases across its agent wallets, newest first, without a cursor on a partial page', async () => {
    const page = await ws.client.receipts.list();
    expect(page.receipts).toEqual(made);
    expect(page.nextCursor).toBeUndefined();
  });

  it('lists a provider\'s sales', async () => {
    const page = await seller.client.receipts.list();
    expect(page.receipts.map((r) => r.id)).toEqual(made.map((r) => r.id));
  });

  it('pages with limit and after; nextCursor only on full pages', async () => {
    const p1 = await ws.client.receipts.list({ limit: 3 });
    expect(p1.receipts.map((r) => r.id)).toEqual(made.slice(0, 3).map((r) => r.id));
    expect(p1.nextCursor).toBe(made[2]!.id);
    const p2 = await ws.client.receipts.list({ limit: 3, after: p1.nextCursor });
    expect(p2.receipts.map((r) => r.id)).toEqual(made.slice(3, 6).map((r) => r.id));
    const p3 = await ws.client.receipts.list({ limit: 3, after: p2.nextCursor });
    expect(p3.receipts.map((r) => r.id)).toEqual(made.slice(6).map((r) => r.id));
    expect(p3.nextCursor).toBeUndefined();
    // a full last page still carries a cursor, and the page after it is empty
    const full = await ws.client.receipts.list({ limit: 4, after: made[3]!.id });
    expect(full.nextCursor).toBe(made[7]!.id);
    expect(await ws.client.receipts.list({ limit: 4, after: full.nextCursor })).toEqual({ receipts: [] });
  });

  it('refuses a limit outside 1..200 with 400 naming limit', async () => {
    for (const limit of [0, 201]) {
      const e = await refused(ws.client.receipts.list({ limit }), 400, 'VALIDATION_FAILED');
      expect(e.details).toMatchObject({ field: 'limit' });
    }
    expect((await ws.client.receipts.list({ limit: 200 })).receipts).toHaveLength(made.length);
  });

  it('refuses an unknown cursor, or one from another tenant\'s list, with 400 INVALID_CURSOR', async () => {
    await refused(ws.client.receipts.list({ after: 'rcp_unknown' }), 400, 'INVALID_CURSOR');
    const other = await t.newWorkspace('Cursor Thief');
    await refused(other.client.receipts.list({ after: made[0]!.id }), 400, 'INVALID_CURSOR');
  });

  it('shows another tenant nothing', async () => {
    const other = await t.newWorkspace('Empty Workspace');
    expect(await other.client.receipts.list()).toEqual({ receipts: [] });
    const otherSeller = await t.newProvider();
    expect(await otherSeller.client.receipts.list()).toEqual({ receipts: [] });
  });
});

describe('GET /v1/receipts/:id and GET /v1/transactions/:id/receipts', () => {
  it('gives the buyer\'s workspace and the seller the receipt, and 404 to anyone else', async () => {
    const r = made[1]!;
    expect(await ws.client.receipts.get(r.id)).toEqual(r);
    expect(await seller.client.receipts.get(r.id)).toEqual(r);
    await refused(t.workspace.receipts.get(r.id), 404, 'NOT_FOUND');
    await refused((await t.newProvider()).client.receipts.get(r.id), 404, 'NOT_FOUND');
    await refused(ws.client.receipts.get('rcp_unknown'), 404, 'NOT_FOUND');
  });

  it('lists the receipts of a transaction for its buyer and seller only', async () => {
    const r = made[0]!;
    expect(await ws.client.receipts.forTransaction(r.transactionId)).toEqual([r]);
    expect(await seller.client.receipts.forTransaction(r.transactionId)).toEqual([r]);
    await refused(t.workspace.receipts.forTransaction(r.transactionId), 404, 'NOT_FOUND');
    await refused(ws.client.receipts.forTransaction('txn_unknown'), 404, 'NOT_FOUND');
  });

  it('needs receipts:read', async () => {
    const key = await mintKey(t, { id: ws.id, kind: 'workspace' }, ['wallets:read']);
    const e = await refused(t.client(key).receipts.list(), 403, 'FORBIDDEN');
    expect(String(e.message)).toContain('receipts:read');
  });
});
