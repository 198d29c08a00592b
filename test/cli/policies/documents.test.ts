/**
 * `agentpay policies` at the edges of what the gateway accepts: documents that are empty or
 * over its size limit (reported naming the file, like parse errors), a price of zero in
 * `policies test`, and how an `allow` decision is worded once budgets were checked.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluationText } from '../../../src/cli/policies.js';
import { MAX_DOCUMENT_CHARS } from '../../../src/domain/policies/language/index.js';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { newBuyer } from '../../payments/helpers.js';
import { newSeller } from '../../policies/helpers.js';
import { cli, gatewayEnv, json, tempDir } from '../helpers.js';

let t: TestGateway;
let ws: { id: string; apiKey: string };
const configDir = tempDir();
const work = tempDir('agentpay-policy-documents-');
let env: Record<string, string>;
const run = (...args: string[]) => cli(args, { configDir, env, cwd: work });

/** A valid one-section document one character over the gateway's limit (a long comment at its end). */
const head = 'deny "big":\n  price > 1000000\n# ';
writeFileSync(join(work, 'big.policy'), head + 'x'.repeat(MAX_DOCUMENT_CHARS + 1 - head.length));
writeFileSync(join(work, 'empty.policy'), '');

beforeAll(async () => {
  t = await startTestGateway();
  ws = await t.newWorkspace('CLI Policy Documents');
  env = gatewayEnv(t, ws.apiKey);
});
afterAll(() => t.close());

const SPLIT = `expected a document of at most ${MAX_DOCUMENT_CHARS} characters, the most the gateway accepts, found ${MAX_DOCUMENT_CHARS + 1} characters. Split its sections over several documents and apply each one`;

describe('agentpay policies lint', () => {
  it('refuses a document over the gateway limit at the first character past it (exit 1)', async () => {
    const r = await run('policies', 'lint', 'big.policy');
    expect(r.exitCode).toBe(1);
    expect(r.stderr.trim()).toBe(`big.policy:3:${MAX_DOCUMENT_CHARS + 1 - 'deny "big":\n  price > 1000000\n'.length}: ${SPLIT}`);
  });

  it('refuses an empty document, saying what to write', async () => {
    const r = await run('policies', 'lint', 'empty.policy');
    expect(r.exitCode).toBe(1);
    expect(r.stderr.trim()).toBe('empty.policy:1:1: expected a section header such as "deny:", found an empty document. Write at least one section: a header such as deny "gambling": and a rule indented under it');
  });
});

describe('agentpay policies apply', () => {
  it('refuses an empty or too long document naming the file and what to do, and applies nothing', async () => {
    const empty = await run('policies', 'apply', 'empty.policy');
    expect(empty.exitCode).toBe(1);
    expect(empty.stderr).toContain('error VALIDATION_FAILED: empty.policy:1:1: expected a section header such as "deny:", found an empty document. Write at least one section');
    expect(empty.stderr).toContain('; nothing was applied');

    const big = await run('policies', 'apply', 'big.policy');
    expect(big.exitCode).toBe(1);
    expect(big.stderr).toContain(`error VALIDATION_FAILED: big.policy:3:`);
    expect(big.stderr).toContain(`${SPLIT}; nothing was applied`);
    expect(big.stderr).not.toContain('must NOT have');
    expect((await t.client(ws.apiKey).policies.list()).policies).toEqual([]);
  });

  it('sends a document of exactly the limit, which the gateway accepts', async () => {
    writeFileSync(join(work, 'full.policy'), head + 'x'.repeat(MAX_DOCUMENT_CHARS - head.length));
    const r = await run('policies', 'apply', 'full.policy', '--json');
    expect(r.exitCode, r.stderr).toBe(0);
    expect(json(r).policies.map((p: { name: string }) => p.name)).toEqual(['big']);
  });
});

describe('agentpay policies test', () => {
  it('accepts --price 0 as the API does', async () => {
    const other = await t.newWorkspace('CLI Policy Price Zero');
    const client = t.client(other.apiKey);
    await client.policies.apply('approval:\n  price > 500\n');
    const walletId = (await newBuyer(t, client)).walletId;
    const capabilityId = await (await newSeller(t)).publish({ priceMinor: '600' });
    const r = await cli(['policies', 'test', '--wallet', walletId, '--capability', capabilityId, '--price', '0', '--json'], {
      configDir, env: { ...env, AGENTPAY_API_KEY: other.apiKey }, cwd: work,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(json(r)).toMatchObject({ decision: 'allow' });
  });

  it('words an allow as the policies letting the purchase through, the balance not checked (budgets were)', async () => {
    const other = await t.newWorkspace('CLI Policy Allow Text');
    const client = t.client(other.apiKey);
    await client.policies.apply('budget:\n  per agent 1000 per day\n');
    const walletId = (await newBuyer(t, client)).walletId;
    const capabilityId = await (await newSeller(t)).publish({ priceMinor: '600' });
    const text = evaluationText(await client.policies.evaluate({ walletId, capabilityId }));
    expect(text).toContain('allow: the policies let the purchase through (the balance is not checked)');
    expect(text).not.toContain('budget and balance permitting');
    expect(text).toMatch(/budget\s+within/);
  });
});
