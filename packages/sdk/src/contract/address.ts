/**
 * A capability's address, checked by one set of rules: the gateway's when a capability is published,
 * and the SDK's before it launches a package capability. Runs anywhere (no Node imports).
 */
import { Type, type Static } from '@sinclair/typebox';
import { Closed } from './schemas.js';

/** Where a capability runs: an HTTPS URL, or one pinned npm package launched with npx. */
export const CapabilityAddressSchema = Type.Union([
  Closed({ kind: Type.Literal('url'), url: Type.String() }),
  Closed({
    kind: Type.Literal('package'),
    command: Type.String({ description: 'the launcher: "npx"' }),
    args: Type.Array(Type.String(), { description: 'the pinned package, e.g. ["-y", "my-tool@1.2.3"]' }),
    version: Type.String({ description: 'the one exact version run' }),
  }),
], { description: 'where the capability is called: a URL, or an npm package run with npx at one exact version' });
export type CapabilityAddress = Static<typeof CapabilityAddressSchema>;

/** An address refused: `field` names the part, `reason` says what is wrong and what to send. */
export class AddressError extends Error {
  constructor(readonly field: string, readonly reason: string) {
    super(`${field}: ${reason}`);
    this.name = 'AddressError';
  }
}

/** The only launcher a package address may use. */
export const PACKAGE_LAUNCHER = 'npx';
/** Flags allowed before the package spec in `args` (anything else could fetch another package). */
const LAUNCHER_FLAGS = new Set(['-y', '--yes']);
/** semver.org's regular expression for one exact version (no ranges, wildcards or tags). */
const EXACT_SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;
/** npm package names, scoped or not (lowercase; no paths, URLs, git or `npm:` aliases). */
const NPM_NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** An https URL, or http only on the loopback interface (a seller running on this machine). */
export function checkAddressUrl(value: unknown, field: string): string {
  if (typeof value !== 'string' || !value.trim()) throw new AddressError(field, 'must be a URL string such as "https://api.example.com/summarize"');
  const s = value.trim();
  if (s.length > 2048) throw new AddressError(field, 'must be at most 2048 characters');
  let url: URL;
  try {
    url = new URL(s);
  } catch {
    throw new AddressError(field, `is not a URL: ${JSON.stringify(s)}`);
  }
  const loopbackHttp = url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
  if (url.protocol !== 'https:' && !loopbackHttp) {
    throw new AddressError(field, 'must be an https:// URL (plain http:// only for 127.0.0.1 or localhost)');
  }
  if (url.username || url.password) throw new AddressError(field, 'must not carry credentials: discovery shows the URL to every buyer');
  return s;
}

function checkPackageAddress(a: Record<string, unknown>): CapabilityAddress {
  if (a.command !== PACKAGE_LAUNCHER) {
    throw new AddressError('address.command', `must be "${PACKAGE_LAUNCHER}", the approved launcher; got ${JSON.stringify(a.command)}`);
  }
  if (typeof a.version !== 'string' || !a.version) {
    throw new AddressError('address.version', 'is required: the one exact version to run, e.g. "1.2.3"');
  }
  const version = a.version;
  if (!EXACT_SEMVER.test(version)) {
    throw new AddressError('address.version', `must be one exact version such as "1.2.3"; got ${JSON.stringify(version)} (ranges ^ ~ > < *, x wildcards and tags such as "latest" are refused)`);
  }
  if (!Array.isArray(a.args) || a.args.length === 0 || a.args.length > 32 || !a.args.every((x) => typeof x === 'string' && x.length > 0 && x.length <= 500)) {
    throw new AddressError('address.args', 'must be a list of strings naming the pinned package, e.g. ["-y", "my-tool@1.2.3"]');
  }
  const args = a.args as string[];
  const specAt = args.findIndex((x) => !x.startsWith('-'));
  const stray = args.slice(0, specAt === -1 ? args.length : specAt).find((x) => !LAUNCHER_FLAGS.has(x));
  if (stray !== undefined) {
    throw new AddressError('address.args', `${JSON.stringify(stray)} is not allowed before the package; only -y or --yes may come first`);
  }
  if (specAt === -1) throw new AddressError('address.args', `must name the package pinned to its version, e.g. ["-y", "my-tool@${version}"]`);
  const spec = args[specAt]!;
  const at = spec.lastIndexOf('@');
  if (at <= 0) throw new AddressError('address.args', `${JSON.stringify(spec)} pins no version; write "${spec}@${version}"`);
  const name = spec.slice(0, at);
  const pinned = spec.slice(at + 1);
  if (!NPM_NAME.test(name) || name.length > 214) {
    throw new AddressError('address.args', `${JSON.stringify(spec)} is not an npm package name with a version, e.g. "my-tool@1.2.3" or "@scope/my-tool@1.2.3"`);
  }
  if (!EXACT_SEMVER.test(pinned)) {
    throw new AddressError('address.args', `${JSON.stringify(spec)} must pin one exact version such as "${name}@1.2.3" (ranges ^ ~ > < *, x wildcards and tags such as "latest" are refused)`);
  }
  if (pinned !== version) {
    throw new AddressError('address.args', `pins ${name}@${pinned} but address.version is ${JSON.stringify(version)}; they must be the same version`);
  }
  const extra = Object.keys(a).find((k) => !['kind', 'command', 'args', 'version'].includes(k));
  if (extra) throw new AddressError(`address.${extra}`, 'is not a field of a package address (kind, command, args, version)');
  return { kind: 'package', command: PACKAGE_LAUNCHER, args: [...args], version };
}

/** Exactly one of `endpoint` (a URL) or `address` (url or package), as one address. */
export function checkCapabilityAddress(input: { endpoint?: unknown; address?: unknown }): CapabilityAddress {
  const hasEndpoint = input.endpoint !== undefined && input.endpoint !== null;
  const hasAddress = input.address !== undefined && input.address !== null;
  if (hasEndpoint && hasAddress) throw new AddressError('endpoint', 'send exactly one of endpoint or address, not both');
  if (!hasEndpoint && !hasAddress) {
    throw new AddressError('endpoint', 'send exactly one of endpoint (a URL) or address ({kind: "url", url} or {kind: "package", command, args, version})');
  }
  if (hasEndpoint) return { kind: 'url', url: checkAddressUrl(input.endpoint, 'endpoint') };
  const a = input.address;
  if (typeof a !== 'object' || Array.isArray(a)) throw new AddressError('address', 'must be an object: {kind: "url", url} or {kind: "package", command, args, version}');
  const addr = a as Record<string, unknown>;
  if (addr.kind === 'url') {
    const extra = Object.keys(addr).find((k) => k !== 'kind' && k !== 'url');
    if (extra) throw new AddressError(`address.${extra}`, 'is not a field of a url address (kind, url)');
    return { kind: 'url', url: checkAddressUrl(addr.url, 'address.url') };
  }
  if (addr.kind === 'package') return checkPackageAddress(addr);
  throw new AddressError('address.kind', `must be "url" or "package"; got ${JSON.stringify(addr.kind)}`);
}

