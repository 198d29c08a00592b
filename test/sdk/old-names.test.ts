/**
 * The SDK's one name for the gateway is `gatewayUrl`; `baseUrl`, its old name, still works and
 * says so once per process with console.warn (docs/configuration.md).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AgentpayClient } from '../../packages/sdk/src/client/index.js';
import { resetOldNameNotices } from '../../packages/sdk/src/deprecation.js';
import { AgentpayError } from '../../packages/sdk/src/errors.js';

/** A fetch that records the URLs asked for and answers a health body. */
function recordingFetch(urls: string[]): typeof fetch {
  return (async (input: RequestInfo | URL) => {
    urls.push(String(input instanceof Request ? input.url : input));
    return new Response(JSON.stringify({ status: 'ok' }), { status: 200, headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
}

afterEach(() => {
  vi.restoreAllMocks();
  resetOldNameNotices();
});

describe('AgentpayClient gatewayUrl', () => {
  it('gatewayUrl is the name: no notice', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const urls: string[] = [];
    const client = new AgentpayClient({ gatewayUrl: 'https://gw.example/', fetch: recordingFetch(urls) });
    await client.platform.health();
    expect(urls[0]).toMatch(/^https:\/\/gw\.example\/health/);
    expect(client.http.gatewayUrl).toBe('https://gw.example');
    expect(warn).not.toHaveBeenCalled();
  });

  it('baseUrl, the old name, still works, with one console.warn line per process', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const urls: string[] = [];
    const a = new AgentpayClient({ baseUrl: 'https://old.example', fetch: recordingFetch(urls) });
    const b = new AgentpayClient({ baseUrl: 'https://old.example', fetch: recordingFetch(urls) });
    await a.platform.health();
    await b.platform.health();
    expect(urls.every((u) => u === 'https://old.example/health')).toBe(true);
    expect(a.http.baseUrl).toBe('https://old.example');
    expect(warn.mock.calls).toEqual([['agentpay-sdk: the option "baseUrl" is an old name of "gatewayUrl"; it still works, but use "gatewayUrl"']]);
  });

  it('neither: a coded error naming gatewayUrl', () => {
    expect(() => new AgentpayClient({} as never)).toThrow(AgentpayError);
    expect(() => new AgentpayClient({} as never)).toThrow(/gatewayUrl is missing/);
  });
});
