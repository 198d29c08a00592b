/**
 * `agentpay/mcp/buyer`: MCP tool calls that pay, with the agent's wallet.
 *
 *   const buyer = createBuyer({ gatewayUrl, ca, walletId, privateKeyPem, maxPriceMinor: '500' });
 *   const { result, receipt } = await payingCallTool(client, buyer, { name: 'forecast', arguments: { city: 'Faro' } });
 *
 * The same steps as the REST buyer (../buyer/index.ts), through its transport-free payer:
 * call the tool; on the payment-required tool error verify the challenge against the platform
 * key, refuse a price above the ceiling or an expired quote (nothing signed, nothing sent),
 * sign the proof, call once more with it in `_meta["agentpay/payment"]`, and verify the
 * receipt in the result's `_meta["agentpay/receipt"]` against the exact result (resultBytes).
 * Every refusal is an AgentpayError with the specification's code.
 *
 * Package capabilities (an npm package run with `npx` at one exact version) are launched
 * over stdio with `launchPackageCapability` / `connectPackageCapability`.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, type StdioServerParameters } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolRequest, CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '../../core/errors.js';
import { parseAddress } from '../../domain/capabilities.js';
import type { Buyer } from '../buyer/index.js';
import { cancelled, type ApprovalWaitOptions, type Payer } from '../buyer/payer.js';
import { toError } from '../client/http.js';
import { AgentpayError } from '../errors.js';
import type { PriceChallenge, Receipt } from '../protocol.js';
import type { CapabilityAddress } from '../types.js';
import { envelopeOf, PAYMENT_META, RECEIPT_META, resultBytes } from './protocol.js';

export interface PayingCallOptions {
  /** ceiling for this call, overriding the buyer's */
  maxPriceMinor?: string | bigint;
  /** aborts before the proof is sent (CANCELLED, nothing charged); afterwards the purchase proceeds */
  signal?: AbortSignal;
  /** wait for a person when a policy holds the purchase (APPROVAL_REQUIRED), then retry once */
  approval?: ApprovalWaitOptions;
  /** MCP request timeout per call, ms (the SDK's default otherwise) */
  timeout?: number;
}

export interface PaidToolCall {
  /** the tool's result; `isError` when the tool failed (the buyer was refunded: receipt.status 'failed') */
  result: CallToolResult;
  /** the verified receipt of a paid call; null for a free tool (or a seller that could not complete) */
  receipt: Receipt | null;
  /** the challenge that was paid; null for a free tool */
  challenge: PriceChallenge | null;
}

const payerOf = (b: Buyer | Payer): Payer => ('payer' in b ? b.payer : b);

/** The agentpay layer refused (the tool did not run): its error envelope as a typed error. */
function refusalOf(result: CallToolResult): AgentpayError | null {
  const a = envelopeOf(result);
  return a ? toError({ status: a.status, headers: new Headers(), body: a.envelope }) : null;
}

/**
 * Calls a tool and pays for it if the seller asks. A free tool's result comes back as is
 * with `receipt: null`; a tool error from a paid tool is not thrown: it comes back with its
 * failed receipt (the buyer was refunded).
 */
export async function payingCallTool(client: Client, buyer: Buyer | Payer, params: CallToolRequest['params'], opts: PayingCallOptions = {}): Promise<PaidToolCall> {
  const payer = payerOf(buyer);
  const attempt = () => callOnce(client, payer, params, opts);
  return opts.approval ? payer.withApproval(attempt, opts.approval, opts.signal) : attempt();
}

async function callOnce(client: Client, payer: Payer, params: CallToolRequest['params'], opts: PayingCallOptions): Promise<PaidToolCall> {
  const { signal } = opts;
  if (signal?.aborted) throw cancelled();
  const { [PAYMENT_META]: _stale, ...meta } = params._meta ?? {};
  const call = async (extraMeta: Record<string, unknown>, withSignal: boolean): Promise<CallToolResult> =>
    (await client.callTool({ ...params, _meta: { ...meta, ...extraMeta } }, undefined, {
      ...(withSignal && signal ? { signal } : {}),
      ...(opts.timeout !== undefined ? { timeout: opts.timeout } : {}),
    })) as CallToolResult;

  let first: CallToolResult;
  try {
    first = await call({}, true);
  } catch (e) {
    throw signal?.aborted ? cancelled() : e;
  }
  const asked = envelopeOf(first);
  if (!asked) return { result: first, receipt: null, challenge: null }; // a free tool
  const challenge = await payer.verifiedChallenge(asked.envelope).catch((e: unknown) => {
    throw signal?.aborted ? cancelled() : e;
  });
  if (!challenge) throw refusalOf(first)!; // refused before any price, e.g. GATEWAY_UNAVAILABLE

  const proof = await payer.signProof(challenge, { maxPriceMinor: opts.maxPriceMinor, signal });
  // From here the purchase proceeds: the signal no longer applies (as with the REST buyer).
  const paid = await call({ [PAYMENT_META]: proof }, false);
  const refusal = refusalOf(paid);
  if (refusal) throw refusal; // the gateway refused the proof: the tool did not run, nothing charged
  const receipt = await payer.verifiedReceipt(paid._meta?.[RECEIPT_META], resultBytes(paid), challenge);
  return { result: paid, receipt, challenge };
}

// ---- package capabilities ----

/** A capability as discovery (`{capability, version}`) or `capabilities.get` returns it, or just its address. */
export type LaunchableCapability =
  | { capability?: { id?: string; protocol?: string }; version?: { address: CapabilityAddress } | undefined }
  | CapabilityAddress;

export interface LaunchOptions {
  /**
   * The executable that stands for `npx` (default "npx" on the PATH): an absolute path to npx,
   * or a stand-in in tests. The capability's own, validated arguments are always the ones passed.
   */
  npxCommand?: string;
  /** environment of the launched server (default: the MCP SDK's safe subset of this one) */
  env?: Record<string, string>;
  cwd?: string;
  /** where the server's stderr goes (default "inherit") */
  stderr?: StdioServerParameters['stderr'];
}

/** The package address of a capability, checked by the gateway's own publishing rules. */
export function packageAddressOf(capability: LaunchableCapability): Extract<CapabilityAddress, { kind: 'package' }> {
  const isAddress = 'kind' in capability;
  const address = isAddress ? capability : capability.version?.address;
  const id = isAddress ? 'the capability' : (capability.capability?.id ?? 'the capability');
  const refuse = (field: string, message: string) => new AgentpayError('VALIDATION_FAILED', `${id} cannot be launched: ${field}: ${message}`, { details: { field } });
  if (!isAddress && capability.capability?.protocol !== undefined && capability.capability.protocol !== 'mcp') {
    throw refuse('capability.protocol', `is "${capability.capability.protocol}"; only mcp capabilities are MCP servers to launch`);
  }
  if (!address) throw refuse('version.address', 'is missing: the address is shown only while the capability is discoverable');
  if (address.kind !== 'package') throw refuse('address.kind', `is "${address.kind}", not "package"; connect to its URL with StreamableHTTPClientTransport instead`);
  try {
    // the same rules the gateway applied at publishing: `npx`, only -y/--yes before the package, one exact version
    const checked = parseAddress({ address });
    return checked as Extract<CapabilityAddress, { kind: 'package' }>;
  } catch (e) {
    if (e instanceof AppError) throw new AgentpayError('VALIDATION_FAILED', `${id} cannot be launched: ${e.message}`, { details: e.details });
    throw e;
  }
}

/** A stdio transport that runs the capability's pinned package (not started: `client.connect` starts it). */
export function launchPackageCapability(capability: LaunchableCapability, opts: LaunchOptions = {}): StdioClientTransport {
  const address = packageAddressOf(capability);
  return new StdioClientTransport({
    command: opts.npxCommand ?? address.command,
    args: address.args,
    ...(opts.env ? { env: opts.env } : {}),
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
    ...(opts.stderr !== undefined ? { stderr: opts.stderr } : {}),
  });
}

/** Launches the package and connects an MCP client to it; `client.close()` stops the process. */
export async function connectPackageCapability(capability: LaunchableCapability, opts: LaunchOptions & { clientInfo?: { name: string; version: string } } = {}): Promise<Client> {
  const client = new Client(opts.clientInfo ?? { name: 'agentpay-buyer', version: '1' });
  await client.connect(launchPackageCapability(capability, opts));
  return client;
}

export { createBuyer, type Buyer, type BuyerOptions } from '../buyer/index.js';
export { AgentpayError } from '../errors.js';
export { PAYMENT_META, RECEIPT_META, STATUS_META, resultBytes } from './protocol.js';
