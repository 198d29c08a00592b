/**
 * `agentpay gateway start`'s settings without a flag: the webhook egress allow-list (config key
 * `webhookEgressAllow`, AGENTPAY_WEBHOOK_EGRESS_ALLOW, which wins) and `retention`. What they do:
 * test/webhooks/egress.test.ts and test/webhooks/retention.test.ts.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { gatewayStartOptions } from '../../../src/cli/gateway-config.js';
import { removeTempDirs, tempDir } from '../helpers.js';

afterAll(removeTempDirs);

function configFile(content: unknown): string {
  const file = join(tempDir(), 'agentpay.json');
  writeFileSync(file, JSON.stringify(content));
  return file;
}

describe('gateway start: webhookEgressAllow', () => {
  it('comes from the config file or the environment (which wins), each entry checked', () => {
    const dir = tempDir();
    expect(gatewayStartOptions({}, dir, {}).config.webhooks).toBeUndefined();
    expect(gatewayStartOptions({ config: configFile({ webhookEgressAllow: ['10.20.0.0/16'] }) }, dir, {}).config.webhooks).toEqual({ egressAllow: ['10.20.0.0/16'] });
    expect(gatewayStartOptions({ config: configFile({ webhookEgressAllow: ['10.20.0.0/16'] }) }, dir, { AGENTPAY_WEBHOOK_EGRESS_ALLOW: ' 192.168.5.0/24, fd12::/16 ' }).config.webhooks)
      .toEqual({ egressAllow: ['192.168.5.0/24', 'fd12::/16'] });
    expect(() => gatewayStartOptions({ config: configFile({ webhookEgressAllow: ['intranet'] }) }, dir, {})).toThrow(/webhookEgressAllow has a bad entry: "intranet" is not an IP address/);
    expect(() => gatewayStartOptions({ config: configFile({ webhookEgressAllow: '10.0.0.0/8' }) }, dir, {})).toThrow(/webhookEgressAllow must be a list of CIDR ranges/);
    expect(() => gatewayStartOptions({}, dir, { AGENTPAY_WEBHOOK_EGRESS_ALLOW: '10.0.0.0/40' })).toThrow(/AGENTPAY_WEBHOOK_EGRESS_ALLOW has a bad entry: "10\.0\.0\.0\/40": the prefix length/);
  });
});

describe('gateway start: retention', () => {
  it('comes from the config file, checked', () => {
    const dir = tempDir();
    expect(gatewayStartOptions({ config: configFile({ retention: { railEventsDays: 365 } }) }, dir, {}).config.retention).toEqual({ railEventsDays: 365 });
    expect(() => gatewayStartOptions({ config: configFile({ retention: { railEventsDays: 0 } }) }, dir, {})).toThrow(/retention field railEventsDays must be a whole number of days from 1/);
    expect(() => gatewayStartOptions({ config: configFile({ retention: { forever: true } }) }, dir, {})).toThrow(/retention field forever is not a setting/);
  });
});
