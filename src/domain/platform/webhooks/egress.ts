/**
 * Where webhook deliveries may go (docs/api/webhooks.md § Where deliveries may go). A tenant
 * chooses the URL, so without this the gateway would POST into its own network on a tenant's
 * behalf (a cloud's metadata service at 169.254.169.254, a database on 10.0.0.5) and report what
 * answered: an internal network scanner. Refused: loopback, private (RFC 1918), link-local,
 * CGNAT, unique-local, unspecified, multicast, reserved and documentation ranges, and the IPv6
 * forms that carry one of those (v4-mapped, v4-compatible, NAT64, 6to4).
 *
 * An address is checked where it is used: a literal one when the endpoint is made, and every
 * address a name resolves to at each attempt, the connection going to the address checked
 * (sender.ts), so a name that resolves elsewhere the second time (DNS rebinding) gains nothing.
 * Operators with internal receivers list their ranges in `webhooks.egressAllow`; a sandbox
 * gateway (`agentpay dev`) allows loopback too, for receivers on the developer's machine.
 */
import net from 'node:net';

/** A delivery refused because of where it would go; recorded as a generic reason only. */
export class EgressRefused extends Error {
  constructor() {
    super('the address is not allowed');
    this.name = 'EgressRefused';
  }
}

type Family = 'ipv4' | 'ipv6';
type Range = readonly [address: string, prefix: number];

const V4_REFUSED: readonly Range[] = [
  ['0.0.0.0', 8], // "this network"; 0.0.0.0 reaches the host itself
  ['10.0.0.0', 8], // private (RFC 1918)
  ['100.64.0.0', 10], // carrier-grade NAT (RFC 6598)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, with the cloud metadata address 169.254.169.254
  ['172.16.0.0', 12], // private (RFC 1918)
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private (RFC 1918)
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
];

const V6_REFUSED: readonly Range[] = [
  ['::', 96], // unspecified (::), loopback (::1) and the deprecated v4-compatible ::a.b.c.d
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard-only
  ['2001::', 32], // Teredo: the IPv4 inside is obfuscated, so all of it
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique-local, with the metadata address fd00:ec2::254
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
];

/** What the sandbox allows besides the operator's list: this machine. */
const LOOPBACK: readonly (readonly [string, number, Family])[] = [['127.0.0.0', 8, 'ipv4'], ['::1', 128, 'ipv6']];

/** The IPv6 prefix `prefix` followed by the IPv4 range `v4/bits` (NAT64 ::/96, 6to4 /16). */
function embedded(prefix: string, at: number, [v4, bits]: Range): Range {
  const n = v4.split('.').reduce((a, o) => a * 256 + Number(o), 0);
  const hi = Math.floor(n / 65536).toString(16);
  const lo = (n % 65536).toString(16);
  // 6to4 puts the IPv4 right after 2002: (bits 16-47); NAT64 in the last 32 bits
  return at === 16 ? [`${prefix}:${hi}:${lo}::`, at + bits] : [`${prefix}${hi}:${lo}`, at + bits];
}

/** Parses `10.1.0.0/16`, `fd12::/64` or a single address; throws naming the entry. */
export function parseCidr(text: string): [address: string, prefix: number, family: Family] {
  const [address = '', bits, ...rest] = text.trim().split('/');
  const v = net.isIP(address);
  if (v === 0 || rest.length) throw new Error(`${JSON.stringify(text)} is not an IP address or CIDR range (e.g. 10.20.0.0/16 or fd12:3456::/48)`);
  const max = v === 4 ? 32 : 128;
  const prefix = bits === undefined ? max : Number(bits);
  if (!/^\d+$/.test(bits ?? String(max)) || prefix > max) throw new Error(`${JSON.stringify(text)}: the prefix length must be a whole number from 0 to ${max}`);
  return [address, prefix, v === 4 ? 'ipv4' : 'ipv6'];
}

export interface EgressOptions {
  /** the sandbox's: loopback is allowed (local receivers, `agentpay listen`) */
  allowLoopback?: boolean;
  /** CIDR ranges (or single addresses) the operator allows although they are refused by default */
  allow?: readonly string[];
}

export class EgressPolicy {
  private readonly refused = new net.BlockList();
  private readonly allowed = new net.BlockList();

  constructor(opts: EgressOptions = {}) {
    for (const r of V4_REFUSED) {
      this.refused.addSubnet(r[0], r[1], 'ipv4');
      // BlockList matches ::ffff:a.b.c.d against IPv4 rules itself; NAT64 and 6to4 need their own
      const nat64 = embedded('64:ff9b::', 96, r);
      this.refused.addSubnet(nat64[0], nat64[1], 'ipv6');
      const sixToFour = embedded('2002', 16, r);
      this.refused.addSubnet(sixToFour[0], sixToFour[1], 'ipv6');
    }
    for (const [a, p] of V6_REFUSED) this.refused.addSubnet(a, p, 'ipv6');
    if (opts.allowLoopback) for (const [a, p, f] of LOOPBACK) this.allowed.addSubnet(a, p, f);
    for (const text of opts.allow ?? []) {
      const [a, p, f] = parseCidr(text);
      this.allowed.addSubnet(a, p, f);
    }
  }

  /** Whether a delivery may connect to `address` (an IP address; anything else is refused). */
  allows(address: string): boolean {
    const v = net.isIP(address);
    if (v === 0) return false;
    const family = v === 4 ? 'ipv4' : 'ipv6';
    return this.allowed.check(address, family) || !this.refused.check(address, family);
  }
}

/** The host of a URL as an IP address when it is one (`[::1]` without its brackets), else undefined. */
export function literalAddress(hostname: string): string | undefined {
  const h = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return net.isIP(h) ? h : undefined;
}

/** Names that mean this machine whatever DNS says (RFC 6761). */
export const isLocalhostName = (hostname: string) => /(^|\.)localhost\.?$/i.test(hostname);
