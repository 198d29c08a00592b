/**
 * The policies and approvals routes: shapes, validation of documents (rejected whole,
 * naming line, column and what was expected), enabling and disabling, approval
 * listing and decisions, and tenancy. Enforcement on purchases is enforcement.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { call, changedTables, snapshotDb } from '../helpers/matrix.js';
import { heldApproval, policyFixture, refusal } from './helpers.js';
import { MAX_CONDITION_NESTING } from '../../src/domain/policies/language/index.js';

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway();
});
afterAll(async () => {
  await t.close();
});

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('POST /v1/policies', () => {
  it('makes one enabled policy per section of the document, in document order', async () => {
    const ws = await t.newWorkspace();
    const { policies } = await ws.client.policies.apply(policyFixture('research-team.policy'));
    expect(policies).toHaveLength(3);
    expect(policies.map((p) => [p.policyType, p.name, p.enabled, p.rules])).toEqual([
      ['deny', 'off limits', true, ['category in ["gambling", "adult"]']],
      ['approval', 'big or beta', true, ['price > 1000', 'protocol == "mcp" and tag "beta"']],
      ['budget', 'daily', true, ['per agent 5000 per day']],
    ]);
    for (const p of policies) {
      expect(p.id).toMatch(/^pol_/);
      expect(p.createdAt).toMatch(ISO);
      expect(p.updatedAt).toBe(p.createdAt);
    }
    expect(policies[1]!.source).toBe('# A person looks at anything above 10.00 USD,\n# and at every MCP tool still in beta.\napproval "big or beta":\n  price > 1000\n  protocol == "mcp"\n    and tag "beta"');
    // a section's source is a document of its own that means the same
    const again = await ws.client.policies.apply(policies[1]!.source);
    expect(again.policies.map((p) => [p.policyType, p.name, p.rules])).toEqual([['approval', 'big or beta', policies[1]!.rules]]);
  });

  it('leaves out the name of an unnamed section', async () => {
    const ws = await t.newWorkspace();
    const [p] = (await ws.client.policies.apply('deny:\n  price > 100\n')).policies;
    expect(Object.keys(p!).sort()).toEqual(['createdAt', 'enabled', 'id', 'policyType', 'rules', 'source', 'updatedAt']);
  });

  it('rejects a document with one bad line whole: 400 VALIDATION_FAILED with line, column and expected, and creates nothing', async () => {
    const ws = await t.newWorkspace();
    const before = snapshotDb(t.dataDir);
    const e = await refusal(ws.client.policies.apply('deny:\n  category == "gambling"\napproval:\n  price > 5.00\nbudget:\n  per agent 100 per day\n'), 'VALIDATION_FAILED');
    expect(e.status).toBe(400);
    expect(e.details).toEqual({
      field: 'document', line: 4, column: 11, expected: 'an integer amount in minor units', location: 'body',
      problems: [{ field: 'document', problem: 'line 4, column 11: expected an integer amount in minor units, found "5.00". Amounts are integers in minor units: write 500 for 5.00' }],
    });
    expect(e.message).toBe('document: line 4, column 11: expected an integer amount in minor units, found "5.00". Amounts are integers in minor units: write 500 for 5.00');
    expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
    expect((await ws.client.policies.list()).policies).toEqual([]);
  });

  it('refuses 8,000 nested parentheses (once a stack overflow, 500) with 400 naming the line and column where the nesting goes too deep, and creates nothing', async () => {
    const ws = await t.newWorkspace();
    const before = snapshotDb(t.dataDir);
    const e = await refusal(ws.client.policies.apply(`deny "deep":\n  price > 1\n  ${'('.repeat(8000)}price > 5${')'.repeat(8000)}\n`), 'VALIDATION_FAILED');
    expect(e.status).toBe(400);
    expect(e.details).toMatchObject({ field: 'document', line: 3, column: 3 + MAX_CONDITION_NESTING, location: 'body' });
    expect(e.message).toMatch(new RegExp(`^document: line 3, column ${3 + MAX_CONDITION_NESTING}: expected a condition nested at most ${MAX_CONDITION_NESTING} levels deep`));
    expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
  });

  it('refuses a document that is not a string, and a provider key (which lacks policies:write)', async () => {
    const res = await call(t, 'POST', '/v1/policies', { apiKey: t.creds.workspace.apiKey, body: { document: ['deny:'] } });
    expect(res.status).toBe(400);
    expect(res.body.error?.message).toContain('document');
    const e = await refusal(t.provider.policies.apply('deny:\n  always\n'), 'FORBIDDEN');
    expect(e.message).toContain('policies:write');
  });
});

describe('GET /v1/policies, POST /v1/policies/:id/disable and /enable', () => {
  it('lists every policy of the workspace, disabled ones included, in the order they apply', async () => {
    const ws = await t.newWorkspace();
    const first = (await ws.client.policies.apply(policyFixture('deny-categories.policy'))).policies;
    const second = (await ws.client.policies.apply(policyFixture('budget.policy'))).policies;
    await ws.client.policies.disable(first[0]!.id);
    const { policies } = await ws.client.policies.list();
    expect(policies.map((p) => [p.id, p.enabled])).toEqual([[first[0]!.id, false], [second[0]!.id, true]]);
  });

  it('switch a policy off and on, answering {policy}; repeating either changes nothing', async () => {
    const ws = await t.newWorkspace();
    const [p] = (await ws.client.policies.apply(policyFixture('budget.policy'))).policies;
    const { policy: off } = await ws.client.policies.disable(p!.id);
    expect(off).toMatchObject({ id: p!.id, enabled: false, source: p!.source, rules: p!.rules });
    const before = snapshotDb(t.dataDir);
    expect((await ws.client.policies.disable(p!.id)).policy).toEqual(off);
    expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
    expect((await ws.client.policies.enable(p!.id)).policy.enabled).toBe(true);
  });

  it("answers 404 for another workspace's policy or an unknown id, and changes nothing", async () => {
    const ws = await t.newWorkspace();
    const other = await t.newWorkspace();
    const [p] = (await ws.client.policies.apply(policyFixture('budget.policy'))).policies;
    const before = snapshotDb(t.dataDir);
    for (const id of [p!.id, 'pol_nope']) {
      expect((await refusal(other.client.policies.disable(id), 'NOT_FOUND')).status).toBe(404);
    }
    expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
    expect((await other.client.policies.list()).policies).toEqual([]);
  });
});

describe('GET /v1/approvals and GET /v1/approvals/:id', () => {
  it('list the workspace\'s approvals newest first, filtered by status', async () => {
    const ws = await t.newWorkspace();
    const a1 = await heldApproval(t, ws);
    const a2 = await heldApproval(t, ws);
    const a3 = await heldApproval(t, ws);
    await ws.client.approvals.approve(a1);
    await ws.client.approvals.deny(a2);
    expect((await ws.client.approvals.list()).approvals.map((a) => a.id)).toEqual([a3, a2, a1]);
    expect((await ws.client.approvals.list({ status: 'pending' })).approvals.map((a) => a.id)).toEqual([a3]);
    expect((await ws.client.approvals.list({ status: 'approved' })).approvals.map((a) => a.id)).toEqual([a1]);
    expect((await ws.client.approvals.list({ status: 'denied' })).approvals.map((a) => a.id)).toEqual([a2]);
    expect((await ws.client.approvals.get(a2)).approval).toMatchObject({ id: a2, status: 'denied', amountMinor: '10', currency: 'USD', rule: 'always' });
  });

  it('refuse an unknown status filter with 400 VALIDATION_FAILED', async () => {
    const res = await call(t, 'GET', '/v1/approvals?status=maybe', { apiKey: t.creds.workspace.apiKey });
    expect(res.status).toBe(400);
    expect(res.body.error?.code).toBe('VALIDATION_FAILED');
    expect(res.body.error?.message).toContain('status');
  });

  it("show nothing of another workspace's approvals", async () => {
    const ws = await t.newWorkspace();
    const other = await t.newWorkspace();
    const id = await heldApproval(t, ws);
    expect((await other.client.approvals.list()).approvals).toEqual([]);
    expect((await refusal(other.client.approvals.get(id), 'NOT_FOUND')).status).toBe(404);
  });
});

describe('POST /v1/approvals/:id/approve and /deny', () => {
  it('decide a pending approval once, recording who; a second decision is 409 CONFLICT and changes nothing', async () => {
    const ws = await t.newWorkspace();
    const id = await heldApproval(t, ws);
    const { approval } = await ws.client.approvals.approve(id, { resolvedBy: 'alice@example.com' });
    expect(approval).toMatchObject({ id, status: 'approved', resolvedBy: 'alice@example.com' });
    expect(approval.resolvedAt).toMatch(ISO);

    const before = snapshotDb(t.dataDir);
    for (const decide of [() => ws.client.approvals.approve(id), () => ws.client.approvals.deny(id, { resolvedBy: 'bob' })]) {
      const e = await refusal(decide(), 'CONFLICT');
      expect(e.status).toBe(409);
      expect(e.details).toEqual({ approvalId: id, status: 'approved' });
      expect(e.message).toContain('already approved (by alice@example.com)');
    }
    expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
  });

  it('take no body at all, and then record the id of the deciding key', async () => {
    const ws = await t.newWorkspace();
    const id = await heldApproval(t, ws);
    const res = await call(t, 'POST', `/v1/approvals/${id}/deny`, { apiKey: ws.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.approval).toMatchObject({ id, status: 'denied', resolvedBy: expect.stringMatching(/^key_/) });
  });

  it("answer 404 for another workspace's approval, and change nothing", async () => {
    const ws = await t.newWorkspace();
    const other = await t.newWorkspace();
    const id = await heldApproval(t, ws);
    const before = snapshotDb(t.dataDir);
    expect((await refusal(other.client.approvals.approve(id), 'NOT_FOUND')).status).toBe(404);
    expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
    expect((await ws.client.approvals.get(id)).approval.status).toBe('pending');
  });
});
