/**
 * `agentpay approvals` (without a terminal), `approvals list|approve|deny`, against a
 * real in-process HTTPS gateway where an "approval: always" rule holds real purchases.
 */
import { userInfo } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentpayClient } from '../../../packages/sdk/src/client/index.js';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { authorizeCall, newBuyer } from '../../payments/helpers.js';
import { newSeller, refusal } from '../../policies/helpers.js';
import { cli, json, tempDir, gatewayEnv } from '../helpers.js';

let t: TestGateway;
let ws: { id: string; apiKey: string; client: AgentpayClient };
const configDir = tempDir();
let env: Record<string, string>;
const run = (...args: string[]) => cli(args, { configDir, env });

/** A purchase by a new agent wallet of the workspace, held by the rule; its approval id. */
async function hold(priceMinor = '250'): Promise<string> {
  const s = await newSeller(t);
  const capabilityId = await s.publish({ priceMinor });
  const buyer = await newBuyer(t, ws.client, priceMinor);
  const e = await refusal(authorizeCall(s.client, capabilityId, buyer), 'APPROVAL_REQUIRED');
  return String(e.body.approvalId);
}

beforeAll(async () => {
  t = await startTestGateway();
  ws = await t.newWorkspace('CLI Approvals');
  await ws.client.policies.apply('approval "everything":\n  always\n');
  env = gatewayEnv(t, ws.apiKey);
});
afterAll(() => t.close());

describe('agentpay approvals (no terminal)', () => {
  it('prints the pending approvals once, as JSON, instead of the live screen', async () => {
    const id = await hold('250');
    const r = await run('approvals');
    expect(r.exitCode, r.stderr).toBe(0);
    const { approvals } = json(r);
    const mine = approvals.find((a: { id: string }) => a.id === id);
    expect(mine).toMatchObject({ status: 'pending', amountMinor: '250', currency: 'USD', rule: 'always' });
    expect(approvals.every((a: { status: string }) => a.status === 'pending')).toBe(true);
  });
});

describe('agentpay approvals list / approve / deny', () => {
  it('approves with --resolved-by, after which it is listed as approved and no longer pending', async () => {
    const id = await hold('300');
    const pending = json(await run('approvals', 'list', '--status', 'pending', '--json')).approvals;
    expect(pending.map((a: { id: string }) => a.id)).toContain(id);

    const r = await run('approvals', 'approve', id, '--resolved-by', 'alice', '--json');
    expect(r.exitCode, r.stderr).toBe(0);
    expect(json(r).approval).toMatchObject({ id, status: 'approved', resolvedBy: 'alice', amountMinor: '300' });

    const approved = json(await run('approvals', 'list', '--status', 'approved', '--json')).approvals;
    expect(approved.map((a: { id: string }) => a.id)).toContain(id);
    const stillPending = json(await run('approvals', 'list', '--status', 'pending', '--json')).approvals;
    expect(stillPending.map((a: { id: string }) => a.id)).not.toContain(id);
  });

  it('denies in the name of the OS user by default; a second decision is refused (exit 1)', async () => {
    const id = await hold();
    const r = await run('approvals', 'deny', id, '--json');
    expect(r.exitCode, r.stderr).toBe(0);
    expect(json(r).approval).toMatchObject({ id, status: 'denied', resolvedBy: userInfo().username });

    const again = await run('approvals', 'approve', id);
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toMatch(/^error CONFLICT: /);
  });

  it('lists every status newest first without --status, and refuses an unknown one (exit 2)', async () => {
    const first = await hold();
    const second = await hold();
    const all = json(await run('approvals', 'list', '--json')).approvals.map((a: { id: string }) => a.id);
    expect(all.indexOf(second)).toBeLessThan(all.indexOf(first));
    const bad = await run('approvals', 'list', '--status', 'maybe');
    expect(bad.exitCode).toBe(2);
  });

  it("refuses an agent's key, which lacks approvals:write, naming the scope (exit 1)", async () => {
    const id = await hold();
    const agentKey = (await ws.client.keys.create({ preset: 'agent' })).apiKey.key;
    const r = await run('approvals', 'approve', id, '--api-key', agentKey);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('error FORBIDDEN');
    expect(r.stderr).toContain('approvals:write');
    expect((await ws.client.approvals.get(id)).approval.status).toBe('pending');
  });
});
