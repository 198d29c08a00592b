/**
 * launchPackageCapability: only an `npx` package pinned to one exact version is launched,
 * by the same rules the gateway applies when the capability is published. (The launch
 * itself, over stdio, is exercised by paid-tools.test.ts with an npx stand-in.)
 */
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { AgentpayError } from '../../packages/sdk/src/errors.js';
import { launchPackageCapability, packageAddressOf, type LaunchableCapability } from '../../packages/sdk/src/mcp/buyer.js';
import { PACKAGE_ADDRESS } from './helpers.js';

const pkg = (over: Record<string, unknown>) => ({ ...PACKAGE_ADDRESS, args: [...PACKAGE_ADDRESS.args], ...over }) as unknown as LaunchableCapability;

const refused = (capability: LaunchableCapability): AgentpayError => {
  try {
    launchPackageCapability(capability);
  } catch (e) {
    expect(e).toBeInstanceOf(AgentpayError);
    return e as AgentpayError;
  }
  return expect.unreachable('the launch should have been refused');
};

describe('launchPackageCapability', () => {
  it('builds a stdio transport (not yet started) for a discovery result with a pinned npx package', () => {
    const found = { capability: { id: 'cap_1', protocol: 'mcp' }, version: { address: pkg({}) } } as LaunchableCapability;
    expect(packageAddressOf(found)).toEqual(PACKAGE_ADDRESS);
    const transport = launchPackageCapability(found);
    expect(transport).toBeInstanceOf(StdioClientTransport);
    expect(transport.pid).toBeNull();
  });

  it.each([
    ['another launcher', pkg({ command: 'node', args: ['server.js'] }), 'address.command'],
    ['a version range', pkg({ version: '^1.0.0', args: ['-y', 'agentpay-test-weather@^1.0.0'] }), 'address.version'],
    ['a tag instead of a version', pkg({ version: '1.0.0', args: ['-y', 'agentpay-test-weather@latest'] }), 'address.args'],
    ['no version in the args', pkg({ args: ['-y', 'agentpay-test-weather'] }), 'address.args'],
    ['a local directory', pkg({ args: ['-y', './weather@1.0.0'] }), 'address.args'],
    ['a tarball URL', pkg({ args: ['-y', 'https://example.com/w.tgz@1.0.0'] }), 'address.args'],
    ['a flag that picks another registry', pkg({ args: ['--registry', 'https://evil.example', 'agentpay-test-weather@1.0.0'] }), 'address.args'],
    ['args pinning another version than `version`', pkg({ version: '1.0.1' }), 'address.args'],
  ])('refuses %s before running anything', (_what, capability, field) => {
    const e = refused(capability);
    expect(e).toMatchObject({ code: 'VALIDATION_FAILED', details: { field } });
  });

  it('refuses a url address, a REST capability and a capability whose address is hidden', () => {
    expect(refused({ kind: 'url', url: 'https://seller.example/mcp' })).toMatchObject({ details: { field: 'address.kind' }, message: expect.stringContaining('StreamableHTTPClientTransport') });
    expect(refused({ capability: { id: 'cap_r', protocol: 'rest' }, version: { address: pkg({}) } } as LaunchableCapability)).toMatchObject({ details: { field: 'capability.protocol' } });
    expect(refused({ capability: { id: 'cap_h', protocol: 'mcp' } })).toMatchObject({ details: { field: 'version.address' }, message: expect.stringContaining('cap_h') });
  });
});
