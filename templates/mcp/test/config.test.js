import { describe, expect, it } from 'vitest';
import { configFromEnv } from '../src/config.js';

const capabilities = { text_stats: 'cap_1', top_words: 'cap_2' };
const env = { AGENTPAY_GATEWAY_URL: 'https://127.0.0.1:4402', AGENTPAY_API_KEY: 'ap_p_x', AGENTPAY_CAPABILITIES: JSON.stringify(capabilities) };

describe('configFromEnv', () => {
  it('reads the gateway, key and capability ids, listening on 127.0.0.1:3000 unless told', () => {
    expect(configFromEnv(env)).toEqual({ gatewayUrl: env.AGENTPAY_GATEWAY_URL, apiKey: 'ap_p_x', capabilities, ca: undefined, host: '127.0.0.1', port: 3000 });
    expect(configFromEnv({ ...env, HOST: '0.0.0.0', PORT: '8080' })).toMatchObject({ host: '0.0.0.0', port: 8080 });
  });

  it('still reads the old name AGENTPAY_PROVIDER_KEY, with a one-line notice; AGENTPAY_API_KEY wins', () => {
    const notices = [];
    const { AGENTPAY_API_KEY, ...old } = env;
    expect(configFromEnv({ ...old, AGENTPAY_PROVIDER_KEY: 'ap_p_old' }, (m) => notices.push(m)).apiKey).toBe('ap_p_old');
    expect(notices).toEqual(['notice: AGENTPAY_PROVIDER_KEY is the old name of AGENTPAY_API_KEY; it still works, but use AGENTPAY_API_KEY']);
    expect(configFromEnv({ ...env, AGENTPAY_PROVIDER_KEY: 'ap_p_old' }, (m) => notices.push(m)).apiKey).toBe(AGENTPAY_API_KEY);
    expect(notices).toHaveLength(1);
  });

  it('names every missing variable and where to get it', () => {
    expect(() => configFromEnv({ AGENTPAY_GATEWAY_URL: 'https://127.0.0.1:4402' })).toThrow(/AGENTPAY_API_KEY is not set[^]*AGENTPAY_CAPABILITIES is not set/);
  });

  it('refuses capability ids that are not JSON, or miss a paid tool', () => {
    expect(() => configFromEnv({ ...env, AGENTPAY_CAPABILITIES: 'cap_1' })).toThrow(/AGENTPAY_CAPABILITIES is not JSON/);
    expect(() => configFromEnv({ ...env, AGENTPAY_CAPABILITIES: '{"text_stats":"cap_1"}' })).toThrow(/no capability id for top_words/);
  });

  it('refuses a PORT that is not a port number', () => {
    expect(() => configFromEnv({ ...env, PORT: 'http' })).toThrow(/PORT must be a port number/);
  });
});
