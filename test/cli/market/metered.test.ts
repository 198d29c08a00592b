/**
 * Metered prices from the CLI against a real gateway: `agentpay publish --unit --unit-price
 * --max-units` (the price derived, or checked), `capabilities show` printing the metering (text and
 * --json), `capabilities edit` with a new metered price or --flat, and the usage errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CapabilityDetail, CapabilityEdit, PublishedCapability } from '../../../packages/sdk/src/types.js';
import { capabilityDetailText } from '../../../src/cli/capabilities.js';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { cliFor, errorOf, type Cli } from './helpers.js';

let t: TestGateway;
let cli: Cli;
let provider: string;

beforeAll(async () => {
  t = await startTestGateway();
  cli = cliFor(t);
  provider = t.creds.provider.apiKey;
});
afterAll(async () => {
  cli?.close();
  await t?.close();
});

const base = (name: string) => [
  '--name', name, '--description', `${name}: summaries priced per token`, '--protocol', 'rest', '--category', 'text', '--endpoint', 'https://summarize.example.com/v1/summarize',
];
const myCapabilityIds = async () => (await t.provider.capabilities.list()).map((c) => c.capability.id);

describe('agentpay publish with a metered price', () => {
  it('derives the price (the most a call can cost) from --unit-price × --max-units; show prints the metering', async () => {
    const out = await cli.json<PublishedCapability>(['publish', ...base('Metered'), '--unit', 'token', '--unit-price', '2', '--max-units', '5000'], { key: provider });
    expect(out.capability).toMatchObject({ priceMinor: '10000', metering: { unit: 'token', unitPriceMinor: '2', maxUnits: '5000' } });

    const shown = await cli.json<CapabilityDetail>(['capabilities', 'show', out.capability.id]);
    expect(shown.capability.metering).toEqual({ unit: 'token', unitPriceMinor: '2', maxUnits: '5000' });
    const text = capabilityDetailText(shown);
    expect(text).toMatch(/price:\s+10000 USD minor units per call at most \(metered\)/);
    expect(text).toMatch(/metering:\s+2 USD minor units per token, at most 5000 token a call/);
  });

  it('takes a --price that agrees, and refuses one that does not, naming priceMinor; nothing published', async () => {
    const ok = await cli.json<PublishedCapability>(['publish', ...base('Metered, priced'), '--price', '700', '--unit', 'row', '--unit-price', '7', '--max-units', '100'], { key: provider });
    expect(ok.capability).toMatchObject({ priceMinor: '700', metering: { unit: 'row' } });
    const before = await myCapabilityIds();
    const r = await cli.run(['publish', ...base('Metered, wrong'), '--price', '699', '--unit', 'row', '--unit-price', '7', '--max-units', '100'], { key: provider });
    expect(r.exitCode).toBe(1);
    expect(errorOf(r)).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'priceMinor', expected: '700' } });
    expect(await myCapabilityIds()).toEqual(before);
  });

  it('refuses a partial metered price (exit 2) and a decimal unit price (exit 1), publishing nothing', async () => {
    const before = await myCapabilityIds();
    const partial = await cli.run(['publish', ...base('Partial'), '--unit', 'token', '--unit-price', '2'], { key: provider });
    expect(partial.exitCode).toBe(2);
    expect(partial.stdout + partial.stderr).toContain('max-units');
    const decimal = await cli.run(['publish', ...base('Decimal'), '--unit', 'token', '--unit-price', '0.5', '--max-units', '10'], { key: provider });
    expect(decimal.exitCode).toBe(1);
    expect(errorOf(decimal)).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: '--unit-price' } });
    expect(await myCapabilityIds()).toEqual(before);
  });
});

describe('agentpay capabilities edit with a metered price', () => {
  it('sets a new metered price (the price follows), then --flat drops it', async () => {
    const id = (await cli.json<PublishedCapability>(['publish', ...base('Editable metered'), '--price', '25'], { key: provider })).capability.id;
    const metered = await cli.json<CapabilityEdit>(['capabilities', 'edit', id, '--unit', 'second', '--unit-price', '5', '--max-units', '60'], { key: provider });
    expect([...metered.changed].sort()).toEqual(['metering', 'priceMinor']);
    expect(metered.capability).toMatchObject({ priceMinor: '300', metering: { unit: 'second', unitPriceMinor: '5', maxUnits: '60' } });
    const flat = await cli.json<CapabilityEdit>(['capabilities', 'edit', id, '--flat'], { key: provider });
    expect(flat.changed).toEqual(['metering']);
    expect(flat.capability.priceMinor).toBe('300');
    expect(flat.capability.metering).toBeUndefined();
  });
});
