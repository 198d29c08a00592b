/**
 * What every bench run against the gateway child (bench/gateway.ts) sets up and checks:
 * the capability it sells, the funded agent wallets that buy it, and afterwards that
 * the wallets paid exactly price x completed calls with no hold left. Also the CPU pinning.
 */
import { execFileSync } from 'node:child_process';
import { generateEd25519 } from '../../src/core/ed25519.js';
import type { DevCredentials } from '../../src/gateway/dev-credentials.js';
import { AgentpayClient } from '../../packages/sdk/src/client/index.js';
import type { Capability } from '../../packages/sdk/src/types.js';
import type { Usage } from './usage.js';

export const PRICE = '100';
export const FUNDING = '1000000000000'; // 10^12 minor units per wallet: never the limit

/** What bench/gateway.ts announces when it is ready. */
export interface GatewayReady {
  baseUrl: string;
  ca: string;
  creds: DevCredentials;
  pid: number;
}

/** The gateway's own meter also counts its commits (bench/gateway.ts). */
export type GatewayUsage = Usage & { commits: number; transactions: number; meanCommitMs: number; maxCommitMs: number; tlsHandshakes: number };

export interface BenchWallet {
  walletId: string;
  privateKeyPem: string;
}

export interface Market {
  provider: AgentpayClient;
  workspace: AgentpayClient;
  capability: Capability;
  wallets: BenchWallet[];
}

/** Publishes the bench's capability at PRICE and creates `walletCount` agent wallets funded with FUNDING each. */
export async function setupMarket(g: GatewayReady, walletCount: number): Promise<Market> {
  const provider = new AgentpayClient({ baseUrl: g.baseUrl, apiKey: g.creds.provider.apiKey, ca: g.ca });
  const workspace = new AgentpayClient({ baseUrl: g.baseUrl, apiKey: g.creds.workspace.apiKey, ca: g.ca });
  const { capability } = await provider.capabilities.publish({
    name: 'Bench forecast',
    description: 'the weather, for the benchmark',
    protocol: 'rest',
    priceMinor: PRICE,
    category: 'weather',
    endpoint: 'https://127.0.0.1/forecast',
  });
  const wallets: BenchWallet[] = [];
  for (let i = 0; i < walletCount; i++) {
    const pair = generateEd25519();
    const w = await workspace.wallets.create({ ownerType: 'agent', ownerId: `bench-agent-${i}`, publicKeyPem: pair.publicKeyPem });
    await workspace.wallets.fund(w.id, FUNDING);
    wallets.push({ walletId: w.id, privateKeyPem: pair.privateKeyPem });
  }
  return { provider, workspace, capability, wallets };
}

/** What the buyers counted is what the ledger says: spent = PRICE x paid calls, nothing still held. */
export async function checkIntegrity(m: Pick<Market, 'workspace' | 'wallets'>, paidCalls: number) {
  const balances = await Promise.all(m.wallets.map((w) => m.workspace.wallets.balance(w.walletId)));
  const spent = balances.reduce((a, b) => a + (BigInt(FUNDING) - BigInt(b.balanceMinor)), 0n);
  const held = balances.reduce((a, b) => a + (BigInt(b.balanceMinor) - BigInt(b.availableMinor)), 0n);
  const expected = BigInt(paidCalls) * BigInt(PRICE);
  return { paidCallsCounted: paidCalls, spentMinor: spent.toString(), expectedMinor: expected.toString(), heldMinor: held.toString(), ok: spent === expected && held === 0n };
}

/** Every thread of process `pid` on `cpus` (taskset list, e.g. "0" or "1-3"); threads started later follow their process. */
export function pinToCpus(pid: number, cpus: string): void {
  execFileSync('taskset', ['-apc', cpus, String(pid)], { stdio: 'ignore' });
}
