/**
 * `agentpay-sdk/mcp/buyer`: MCP tool calls that pay, with the agent's wallet.
 *
 *   const buyer = createBuyer({ gatewayUrl, ca, walletId, privateKeyPem, maxPriceMinor: '500' });
 *   const { result, receipt } = await payingCallTool(client, buyer, { name: 'forecast', arguments: { city: 'Faro' } });
 *
 * The same steps as the REST buyer (../buyer/index.ts), through its transport-free payer:
 * call the tool; on the payment-required tool error verify the challenge against the platform
 * key, refuse a challenge for another capability than the one meant (the call's `capabilityId`,
 * else the one the tool advertises in tools/list), a price above the ceiling or an expired quote
 * (nothing signed, nothing sent), sign the proof, call once more with it in
 * `_meta["agentpay/payment"]`, and verify the receipt in the result's `_meta["agentpay/receipt"]`
 * against the exact result (resultBytes). Every refusal is an AgentpayError with the
 * specification's code; a paid call that gets no answer is SELLER_UNREACHABLE with `paid: true`.
 *
 * An MCP `Client` a framework already holds pays through `wrapMcpClient(client, buyer)`: its own
 * `callTool` then does the above.
 *
 * Payment sessions: given a Buyer (createBuyer, whose session pool it shares), a tool whose
 * payment-required answer offers a session is paid with one, as buyer.fetch pays a REST seller:
 * the first call opens it (`_meta["agentpay/session-open"]`), every call carries a voucher
 * (`_meta["agentpay/voucher"]`) and gets the seller-signed receipt back, verified against the
 * result's bytes; later calls of a tool with a session open skip the payment-required round trip; a
 * cap too low is topped up; `buyer.close()` closes the sessions through the same client (call it
 * before closing the client). Given a Payer only, every call is paid per-call.
 *
 * Package capabilities (an npm package run with `npx` at one exact version) are launched
 * over stdio with `launchPackageCapability` / `connectPackageCapability`.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, type StdioServerParameters } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { ListToolsResultSchema, McpError, type CallToolRequest, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AddressError, checkCapabilityAddress } from '../contract/address.js';
import { PAID_BUT_UNANSWERED, type Buyer } from '../buyer/index.js';
import { offerOf, poolOf, type SentAnswer, type SessionPool } from '../buyer/session-pool.js';
import { decodeHeader, encodeHeader } from '../protocol.js';
import { SESSION_GRANT_HEADER, SESSION_RECEIPT_HEADER, type SessionReceipt } from '../contract/sessions.js';
import { cancelled, type ApprovalWaitOptions, type Payer } from '../buyer/payer.js';
import { toError } from '../client/http.js';
import { AgentpayError } from '../errors.js';
import type { PriceChallenge, Receipt } from '../protocol.js';
import type { CapabilityAddress } from '../types.js';
import {
  CAPABILITY_META, envelopeOf, PAYMENT_META, RECEIPT_META, resultBytes, SESSION_GRANT_META, SESSION_RECEIPT_META, SESSION_STEP_META, STATUS_META, toolRequestHash,
} from './protocol.js';

export interface PayingCallOptions {
  /** ceiling for this call, overriding the buyer's */
  maxPriceMinor?: string | bigint;
  /** aborts before the proof is sent (CANCELLED, nothing charged); afterwards the purchase proceeds */
  signal?: AbortSignal;
  /** wait for a person when a policy holds the purchase (APPROVAL_REQUIRED), then retry once */
  approval?: ApprovalWaitOptions;
  /**
   * MCP request timeout per call, ms (the SDK's default otherwise). Keep it above the seller's
   * handler time limit (30 s by default): a paid call that times out here may still complete and
   * be charged, and its answer is lost (SELLER_UNREACHABLE with `paid: true`).
   */
  timeout?: number;
  /**
   * The capability this call is meant to buy (e.g. the id found through discovery): a challenge
   * for any other is refused with CHALLENGE_MISMATCH before anything is signed. Default: the
   * capability the tool advertises in tools/list (`_meta["agentpay/capabilityId"]`), listed once
   * per client; none when the server does not advertise one.
   */
  capabilityId?: string;
}

export interface PaidToolCall {
  /** the tool's result; `isError` when the tool failed (the buyer was refunded: receipt.status 'failed') */
  result: CallToolResult;
  /** the verified receipt of a paid call; null for a free tool (or a seller that could not complete), and for a call paid with a session */
  receipt: Receipt | null;
  /** a call paid with a session's voucher: the seller-signed receipt, verified (null when the tool failed: not charged) */
  sessionReceipt?: SessionReceipt | null;
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
 * failed receipt (the buyer was refunded). A task-augmented call (`params.task`) is refused
 * (VALIDATION_FAILED) before anything is sent.
 */
export async function payingCallTool(client: Client, buyer: Buyer | Payer, params: CallToolRequest['params'], opts: PayingCallOptions = {}): Promise<PaidToolCall> {
  if (params.task !== undefined) {
    // a task's result would come later, through tasks/result, without the receipt check; sellers refuse it too
    throw new AgentpayError('VALIDATION_FAILED', `params.task: a paid tool call does not run as an MCP task; call ${params.name} without params.task (nothing was sent)`, { details: { field: 'params.task' } });
  }
  // a wrapped client's own callTool, so that this call pays (and returns its receipt) itself
  const callTool = originals.get(client) ?? (client.callTool.bind(client) as CallTool);
  return paying(client, callTool, payerOf(buyer), params, opts, undefined);
}

/** A client's own callTool (before wrapMcpClient replaced it). */
type CallTool = (params: CallToolRequest['params'], resultSchema?: unknown, options?: RequestOptions) => Promise<unknown>;

/** Wrapped clients and their own callTool. */
const originals = new WeakMap<Client, CallTool>();

async function paying(client: Client, callTool: CallTool, payer: Payer, params: CallToolRequest['params'], opts: PayingCallOptions, schema: unknown, base: RequestOptions = {}): Promise<PaidToolCall> {
  const attempt = () => callOnce(client, callTool, payer, params, opts, schema, base);
  return opts.approval ? payer.withApproval(attempt, opts.approval, opts.signal) : attempt();
}

async function callOnce(client: Client, callTool: CallTool, payer: Payer, params: CallToolRequest['params'], opts: PayingCallOptions, schema: unknown, base: RequestOptions): Promise<PaidToolCall> {
  const { signal } = opts;
  if (signal?.aborted) throw cancelled();
  const { [PAYMENT_META]: _stale, ...meta } = params._meta ?? {};
  const { signal: _baseSignal, ...baseNoSignal } = base;
  const call = async (extraMeta: Record<string, unknown>, withSignal: boolean): Promise<CallToolResult> =>
    (await callTool({ ...params, _meta: { ...meta, ...extraMeta } }, schema, {
      ...baseNoSignal,
      ...(withSignal && signal ? { signal } : {}),
      ...(opts.timeout !== undefined ? { timeout: opts.timeout } : {}),
    })) as CallToolResult;

  // a tool whose seller has a session open with this buyer: straight to a voucher, no payment-required answer first
  const pool = poolOf(payer);
  const known = pool ? knownTools.get(client)?.get(params.name) : undefined;
  if (pool && known && pool.has(originOf(client), known.capabilityId) && (opts.capabilityId === undefined || opts.capabilityId === known.capabilityId)) {
    const paid = await bySession(client, pool, params.name, known, call);
    if (paid) return paid;
  }

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

  const capabilityId = opts.capabilityId ?? (await advertisedCapability(client, params.name, challenge.capabilityId, opts.timeout));
  if (pool?.wants(offerOf(asked.envelope, challenge), originOf(client))) {
    // the same checks as a proof's, before a session is opened for this capability
    payer.checkChallenge?.(challenge, { maxPriceMinor: opts.maxPriceMinor, capabilityId });
    if (signal?.aborted) throw cancelled();
    const paid = await bySession(client, pool, params.name, challenge, call);
    if (paid) return paid;
  }
  const proof = await payer.signProof(challenge, { maxPriceMinor: opts.maxPriceMinor, signal, capabilityId });
  // From here the purchase proceeds: the signal no longer applies (as with the REST buyer).
  let paid: CallToolResult;
  try {
    paid = await call({ [PAYMENT_META]: proof }, false);
  } catch (e) {
    throw unanswered(params.name, challenge, e);
  }
  const refusal = refusalOf(paid);
  if (refusal) throw refusal; // the gateway refused the proof: the tool did not run, nothing charged
  const receipt = await payer.verifiedReceipt(paid._meta?.[RECEIPT_META], resultBytes(paid), challenge);
  return { result: paid, receipt, challenge };
}

// ---- payment sessions ----

/** Per client: the challenge of each tool paid with a session, so that its later calls go straight to a voucher. */
const knownTools = new WeakMap<Client, Map<string, PriceChallenge>>();
/** Per client: what stands for its seller's origin in the session pool (a session is the seller's and the capability's). */
const origins = new WeakMap<Client, string>();
let nextOrigin = 0;
function originOf(client: Client): string {
  let o = origins.get(client);
  if (!o) origins.set(client, (o = `mcp-client:${++nextOrigin}`));
  return o;
}

const utf8 = new TextEncoder();

/** A tool result as the session pool reads an answer: the agentpay layer's status (a tool error: 500), the grant and receipt as headers, the bytes. */
function answerOf(result: CallToolResult): SentAnswer & { result: CallToolResult } {
  const status = result._meta?.[STATUS_META];
  const first = result.content?.[0];
  // the agentpay layer's own answer (an open, top-up, close or refusal): its JSON body; the tool's: the bytes its receipt covers
  const bytes = typeof status === 'number' ? utf8.encode(first?.type === 'text' ? first.text : '') : resultBytes(result);
  const meta = (key: string) => {
    const v = result._meta?.[key];
    return v && typeof v === 'object' ? encodeHeader(v) : null;
  };
  return {
    status: typeof status === 'number' ? status : result.isError ? 500 : 200,
    header: (name) => (name === SESSION_GRANT_HEADER ? meta(SESSION_GRANT_META) : name === SESSION_RECEIPT_HEADER ? meta(SESSION_RECEIPT_META) : null),
    bytes,
    result,
  };
}

/** A call paid with a session of the buyer's pool; null: pay it per-call. */
async function bySession(client: Client, pool: SessionPool, tool: string, challenge: PriceChallenge, call: (extraMeta: Record<string, unknown>, withSignal: boolean) => Promise<CallToolResult>): Promise<PaidToolCall | null> {
  const send = async (headers: Record<string, string>) => {
    const meta: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(headers)) {
      const key = SESSION_STEP_META[name];
      if (key) meta[key] = decodeHeader(value);
    }
    let result: CallToolResult;
    try {
      result = await call(meta, false);
    } catch (e) {
      throw unanswered(tool, challenge, e);
    }
    return answerOf(result);
  };
  const paid = await pool.pay({ origin: originOf(client), challenge, requestHash: await toolRequestHash(tool), send, closer: send });
  if (!paid) return null;
  const result = (paid.answer as ReturnType<typeof answerOf>).result;
  const refusal = refusalOf(result);
  if (refusal) throw refusal; // refused before the tool ran (not a voucher's corrective 402, which the pool resyncs from)
  let tools = knownTools.get(client);
  if (!tools) knownTools.set(client, (tools = new Map()));
  tools.set(tool, challenge);
  return { result, receipt: null, challenge, sessionReceipt: paid.receipt };
}

// ---- an MCP Client that pays ----

export interface WrapOptions {
  /** ceiling per call, overriding the buyer's (whose default is DEFAULT_MAX_PRICE_MINOR) */
  maxPriceMinor?: string | bigint;
  /** wait for a person when a policy holds a purchase (APPROVAL_REQUIRED), then retry once */
  approval?: ApprovalWaitOptions;
  /** told of every paid call once its receipt is verified (e.g. to log spending): `receipt` for a per-call payment, `sessionReceipt` for a voucher's */
  onPaid?: (call: PaidToolCall & { tool: string }) => void;
}


/**
 * Makes an existing MCP `Client` pay: its `callTool` runs payingCallTool's steps with `buyer`
 * (verify the challenge, refuse a price above the ceiling or another capability than the tool
 * advertises, sign, call again with the proof, verify the receipt), so an agent framework that
 * hands out such a client pays without other changes. A free tool's call is unchanged. A paid
 * call resolves to the tool's result, whose `_meta["agentpay/receipt"]` is the receipt, already
 * verified; a refusal rejects with an AgentpayError (PRICE_ABOVE_CLIENT_LIMIT, INSUFFICIENT_FUNDS,
 * POLICY_DENIED, ...), before anything is signed where the specification says so. The call's
 * `options.signal` and `options.timeout` apply as in payingCallTool. A task-augmented call
 * (`params.task`) passes through unchanged (a seller refuses to run a paid tool as a task).
 * Returns the same client; wrapping it twice does nothing.
 */
export function wrapMcpClient<C extends Client>(client: C, buyer: Buyer | Payer, opts: WrapOptions = {}): C {
  if (originals.has(client)) return client;
  const payer = payerOf(buyer);
  const original = client.callTool.bind(client) as CallTool;
  const payingCall = async (params: CallToolRequest['params'], resultSchema?: unknown, options: RequestOptions = {}) => {
    if (params.task !== undefined) return original(params, resultSchema, options);
    const call = await paying(client, original, payer, params, {
      ...(opts.maxPriceMinor !== undefined ? { maxPriceMinor: opts.maxPriceMinor } : {}),
      ...(opts.approval ? { approval: opts.approval } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.timeout !== undefined ? { timeout: options.timeout } : {}),
    }, resultSchema, options);
    if (call.receipt || call.sessionReceipt) opts.onPaid?.({ ...call, tool: params.name });
    return call.result;
  };
  Object.defineProperty(client, 'callTool', { value: payingCall, writable: true, configurable: true, enumerable: false });
  originals.set(client, original);
  return client;
}

/**
 * The paid call (the proof was sent) ended without a result: a timeout, a closed connection or
 * process, a transport error. The seller may have authorized, even completed, the call.
 */
function unanswered(tool: string, challenge: PriceChallenge, error: unknown): AgentpayError {
  if (error instanceof AgentpayError) return error;
  const why = error instanceof Error ? error.message : String(error);
  return new AgentpayError('SELLER_UNREACHABLE', `the paid call of tool ${tool} got no answer after the payment proof was sent (${why}): ${PAID_BUT_UNANSWERED}`, {
    details: { tool, paid: true, capabilityId: challenge.capabilityId, ...(error instanceof McpError ? { mcpErrorCode: error.code } : {}) },
    cause: error,
  });
}

/** Per client: what its server's tools/list advertises, tool name -> capability id. */
const advertised = new WeakMap<Client, Promise<Map<string, string>>>();

async function listAdvertised(client: Client, timeout: number | undefined): Promise<Map<string, string>> {
  const byTool = new Map<string, string>();
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    // a plain request: the client's own cache of tools (its output validators) stays as the host left it
    const r = await client.request({ method: 'tools/list', params: cursor ? { cursor } : {} }, ListToolsResultSchema, timeout !== undefined ? { timeout } : {});
    for (const tool of r.tools) {
      const id = tool._meta?.[CAPABILITY_META];
      if (typeof id === 'string') byTool.set(tool.name, id);
    }
    cursor = r.nextCursor;
    if (!cursor) break;
  }
  return byTool;
}

/**
 * The capability `tool` advertises in tools/list, the default of what a call is meant to buy;
 * undefined when it advertises none or the list cannot be read. Listed once per client, and
 * once more when the cached id disagrees with the challenge (the tools may have changed).
 */
async function advertisedCapability(client: Client, tool: string, challenged: string, timeout: number | undefined): Promise<string | undefined> {
  const lookup = async (fresh: boolean): Promise<string | undefined> => {
    let listing = fresh ? undefined : advertised.get(client);
    if (!listing) {
      const p = listAdvertised(client, timeout);
      listing = p;
      advertised.set(client, p);
      p.catch(() => advertised.get(client) === p && advertised.delete(client));
    }
    return (await listing.catch(() => undefined))?.get(tool);
  };
  const cached = advertised.has(client);
  const id = await lookup(false);
  // a tool that advertises nothing stays so: listing again on each of its calls would change nothing
  return cached && id !== undefined && id !== challenged ? lookup(true) : id;
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
    const checked = checkCapabilityAddress({ address });
    return checked as Extract<CapabilityAddress, { kind: 'package' }>;
  } catch (e) {
    if (e instanceof AddressError) throw new AgentpayError('VALIDATION_FAILED', `${id} cannot be launched: ${e.message}`, { details: { field: e.field } });
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
export { DEFAULT_MAX_PRICE_MINOR } from '../buyer/payer.js';
export { AgentpayError } from '../errors.js';
export { ERROR_META, PAYMENT_META, RECEIPT_META, STATUS_META, resultBytes } from './protocol.js';
