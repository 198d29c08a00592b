/** `agentpay policies apply|list|enable|disable|test` against a real in-process HTTPS gateway. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { newBuyer } from '../../payments/helpers.js';
import { newSeller } from '../../policies/helpers.js';
import { cli, json, tempDir, gatewayEnv } from '../helpers.js';

let t: TestGateway;
let ws: { id: string; apiKey: string };
const configDir = tempDir();
const work = tempDir('agentpay-policies-');
let env: Record<string, string>;
const run = (...args: string[]) => cli(args, { configDir, env, cwd: work });
const fixture = (name: string) => fileURLToPath(new URL(`../../../fixtures/policies/${name}`, import.meta.url));

beforeAll(async () => {
  t = await startTestGateway();
  // a workspace of its own: the policies these tests apply decide nothing elsewhere
  ws = await t.newWorkspace('CLI Policies');
  env = gatewayEnv(t, ws.apiKey);
});
afterAll(() => t.close());

interface PolicyJson {
  id: string;
  policyType: string;
  name?: string;
  enabled: boolean;
  rules: string[];
}

describe('agentpay policies apply / list / disable / enable', () => {
  let applied: PolicyJson[];

  it('applies a document with three sections as three enabled policies', async () => {
    const r = await run('policies', 'apply', fixture('research-team.policy'), '--json');
    expect(r.exitCode, r.stderr).toBe(0);
    applied = json(r).policies;
    expect(applied.map((p) => [p.policyType, p.name, p.enabled])).toEqual([
      ['deny', 'off limits', true],
      ['approval', 'big or beta', true],
      ['budget', 'daily', true],
    ]);
    expect(applied[1]!.rules).toEqual(['price > 1000', 'protocol == "mcp" and tag "beta"']);
    for (const p of applied) expect(p.id).toMatch(/^pol_/);
  });

  it('lists them, then disable and enable switch one off and on again', async () => {
    const listed = json(await run('policies', 'list', '--json')).policies as PolicyJson[];
    expect(listed.map((p) => p.id)).toEqual(applied.map((p) => p.id));

    const target = applied[1]!.id;
    const off = await run('policies', 'disable', target, '--json');
    expect(off.exitCode, off.stderr).toBe(0);
    expect(json(off).policy).toMatchObject({ id: target, enabled: false });
    const afterOff = json(await run('policies', 'list', '--json')).policies as PolicyJson[];
    expect(afterOff.map((p) => p.enabled)).toEqual([true, false, true]);

    const on = await run('policies', 'enable', target, '--json');
    expect(on.exitCode, on.stderr).toBe(0);
    expect(json(on).policy).toMatchObject({ id: target, enabled: true });
  });

  it('refuses a document with an error whole, pointing at file:line:col and suggesting lint (exit 1)', async () => {
    writeFileSync(join(work, 'broken.policy'), 'deny "ok":\n  category == "gambling"\napproval:\n  price >> 5\n');
    const before = json(await run('policies', 'list', '--json')).policies.length;
    const r = await run('policies', 'apply', 'broken.policy');
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('error VALIDATION_FAILED: broken.policy:4:10: expected an amount in minor units');
    expect(r.stderr).toContain('nothing was applied');
    expect(r.stderr).toContain('Try: find every error at once, offline: agentpay policies lint broken.policy');
    expect(json(await run('policies', 'list', '--json')).policies).toHaveLength(before);
  });

  it('refuses a missing file (exit 2) and an unknown policy id (exit 1, NOT_FOUND)', async () => {
    const missing = await run('policies', 'apply', 'nope.policy');
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain('nope.policy does not exist');
    const unknown = await run('policies', 'disable', 'pol_doesnotexist');
    expect(unknown.exitCode).toBe(1);
    expect(unknown.stderr).toContain('error NOT_FOUND');
  });
});

describe('agentpay policies test', () => {
  let walletId: string;
  let capabilityId: string;
  let approvalPolicyId: string;
  let other: { apiKey: string };
  // another workspace, holding only the rule under test
  const run = (...args: string[]) => cli(args, { configDir, env: { ...env, AGENTPAY_API_KEY: other.apiKey }, cwd: work });

  beforeAll(async () => {
    other = await t.newWorkspace('CLI Policies Test');
    approvalPolicyId = (await t.client(other.apiKey).policies.apply('approval "over 500":\n  price > 500\n')).policies[0]!.id;
    walletId = (await newBuyer(t, t.client(other.apiKey))).walletId;
    capabilityId = await (await newSeller(t)).publish({ priceMinor: '100' });
  });

  it('says which rule would hold a purchase above the limit, and how', async () => {
    const r = await run('policies', 'test', '--wallet', walletId, '--capability', capabilityId, '--price', '600', '--json');
    expect(r.exitCode, r.stderr).toBe(0);
    const e = json(r);
    expect(e.decision).toBe('approval');
    expect(e.matchedRule).toEqual({ policyId: approvalPolicyId, rule: 'price > 500' });
    expect(e.steps).toContainEqual(expect.objectContaining({ policyId: approvalPolicyId, policyType: 'approval', result: 'matched' }));
    // a dry run: nothing was held
    expect((await t.client(other.apiKey).approvals.list()).approvals).toEqual([]);
  });

  it("uses the capability's own price without --price, which this rule lets through", async () => {
    const r = await run('policies', 'test', '--wallet', walletId, '--capability', capabilityId, '--json');
    expect(r.exitCode, r.stderr).toBe(0);
    expect(json(r)).toMatchObject({ decision: 'allow' });
    expect(json(r).steps).toContainEqual(expect.objectContaining({ policyId: approvalPolicyId, result: 'not_matched' }));
  });

  it('needs --wallet and --capability without a terminal, and integer minor units for --price', async () => {
    const noWallet = await run('policies', 'test', '--capability', capabilityId);
    expect(noWallet.exitCode).toBe(2);
    expect(noWallet.stderr).toContain('--wallet is required');
    const decimal = await run('policies', 'test', '--wallet', walletId, '--capability', capabilityId, '--price', '1.50');
    expect(decimal.exitCode).toBe(1);
    expect(decimal.stderr).toContain('--price');
  });
});
