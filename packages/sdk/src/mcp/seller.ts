/**
 * `agentpay-sdk/mcp/seller`: paid MCP tools on an McpServer (@modelcontextprotocol/sdk).
 *
 *   const seller = createSellerPayments({ gatewayUrl, apiKey, ca });
 *   registerPaidTool(server, 'forecast', { seller, capabilityId, description, inputSchema: { city: z.string() } },
 *     async ({ city }) => ({ content: [{ type: 'text', text: `sunny in ${city}` }] }));
 *
 * The seller core's decisions (../seller/core.ts), rendered as a tool call's results:
 * - no proof in the call's `_meta["agentpay/payment"]`: the tool does not run; the result is a
 *   tool error carrying the signed price challenge (docs/protocol.md, "Paid MCP tools");
 * - a proof: the gateway authorizes it (a refusal is answered the same way), then the tool runs;
 * - the tool's result is normalized as it will travel, hashed (resultBytes), and the call
 *   completed; `isError`, a throw, or structured content that fails the tool's outputSchema
 *   fail it as provider_error (the buyer is refunded). The receipt goes back in the result's
 *   `_meta["agentpay/receipt"]`;
 * - an `isError` result keeps its structuredContent only if that passes the outputSchema: MCP
 *   clients check it on error results too, and a client that throws loses the failed receipt;
 * - a task-augmented call (`params.task`) of a paid tool is refused before anything is charged;
 * - payment sessions (a seller created with `sessions`, a tool registered with its name): the
 *   payment-required answer offers one (`session` in `_meta["agentpay/error"]`), and the seller
 *   core's session code takes the buyer's open, top-up, close and vouchers from the call's `_meta`
 *   (SESSION_STEP_META): an open, top-up or close is answered without running the tool (a tool
 *   error with `_meta["agentpay/status"]` 200 and, for an open or top-up, the grant in
 *   `_meta["agentpay/session-grant"]`), a voucher's call runs the tool and carries the
 *   seller-signed receipt in `_meta["agentpay/session-receipt"]` (none for a tool error: not charged).
 *
 * Structured content is checked twice before the call is settled, as it will be checked after:
 * by the zod outputSchema (McpServer parses it after the callback) and by the JSON Schema that
 * tools/list advertises, with the validator MCP clients use (Ajv; a client that listed the tools
 * rejects a result that fails it). Zod accepts what that JSON Schema refuses (an extra key where
 * it says additionalProperties: false, a defaulted field left out where it says required): such
 * a result would be paid for and then thrown away by the buyer's client, so it fails instead.
 * A successful result is sent as the tool returned it (nothing is stripped or filled in).
 */
import type { McpServer, RegisteredTool, ToolCallback } from '@modelcontextprotocol/sdk/server/mcp.js';
import { getParseErrorMessage, normalizeObjectSchema, safeParseAsync, type AnyObjectSchema, type AnySchema, type ZodRawShapeCompat } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import { CallToolResultSchema, type CallToolResult, type ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import {
  chargedFor, createSellerPayments, decide, DEFAULT_HANDLER_TIMEOUT_MS, refusalReason, runWithinDeadline, settleSessionCall,
  type AdmittedDecision, type Answer, type Decision, type PaidCall, type SellerOptions, type SellerPayments, type SessionSource, type SessionStepDecision,
} from '../seller/core.js';
import { decodeHeader } from '../protocol.js';
import { SESSION_GRANT_HEADER } from '../contract/sessions.js';
import { clientCheckOf, type ClientCheck } from './client-check.js';
import {
  mcpPaymentRequiredMeta, mcpReceiptMeta, readMcpPayment, X402_CLIENT_HINT, X402_MCP_PAYMENT_RESPONSE_META, x402ExactSettlementResponse, x402PaymentRequired, type X402ExactOffer,
} from '../interop/wire.js';
import type { PriceChallenge } from '../protocol.js';
import {
  CAPABILITY_META, ERROR_META, PAYMENT_META, RECEIPT_META, resultBytes, SESSION_GRANT_META, SESSION_RECEIPT_META, SESSION_STEP_META, STATUS_META, toolPath, type PaymentEnvelope,
} from './protocol.js';
import { guardTaskCalls, mayBeTaskCall } from './task-guard.js';

export interface PaidToolOptions {
  /** the seller's gateway connection: one `createSellerPayments(...)` for every tool, or its options */
  seller: SellerPayments | SellerOptions;
  /** the capability (protocol `mcp`) this tool sells */
  capabilityId: string;
  /** the tool's outputSchema: structured content that fails it is a provider error, not a sale */
  outputSchema?: ZodRawShapeCompat | AnySchema | undefined;
  /** the tool's name: the x402 resource of its payment-required answer is `mcp://tool/<toolName>` (registerPaidTool sets it) */
  toolName?: string | undefined;
}

export interface PaidToolConfig<InputArgs extends undefined | ZodRawShapeCompat | AnySchema, OutputArgs extends ZodRawShapeCompat | AnySchema> {
  seller: SellerPayments | SellerOptions;
  capabilityId: string;
  title?: string;
  description?: string;
  inputSchema?: InputArgs;
  outputSchema?: OutputArgs;
  annotations?: ToolAnnotations;
  _meta?: Record<string, unknown>;
}

const sellerOf = (s: SellerPayments | SellerOptions): SellerPayments => ('admit' in s ? s : createSellerPayments(s));

const errorResult = (text: string): CallToolResult => ({ content: [{ type: 'text', text }], isError: true });

/**
 * A session's open, top-up or close, answered without running the tool: its JSON body as text, the
 * REST status (200) in `_meta["agentpay/status"]`, the grant of an open or top-up in
 * `_meta["agentpay/session-grant"]`. A tool error, so that a client does not check it against the
 * tool's outputSchema: the tool did not run.
 */
function sessionStepResult(d: SessionStepDecision): CallToolResult {
  const grant = d.headers[SESSION_GRANT_HEADER];
  return {
    content: [{ type: 'text', text: new TextDecoder().decode(d.body) }],
    isError: true,
    _meta: { [STATUS_META]: d.status, ...(grant ? { [SESSION_GRANT_META]: decodeHeader(grant) } : {}) },
  };
}

/** Where the seller core reads a call's session steps: the `_meta` key of each step's header. */
function sessionSourceOf(meta: Record<string, unknown> | undefined, toolName: string): SessionSource {
  return {
    header(name) {
      const key = SESSION_STEP_META[name];
      const v = key === undefined ? undefined : meta?.[key];
      return (typeof v === 'object' && v !== null) || (typeof v === 'string' && v !== '') ? v : undefined;
    },
    path: toolPath(toolName),
  };
}

const TASK_CALL_REFUSED = 'this call could not be checked for params.task (a task-augmented call would be charged without an answer): on a server with a task store, register paid tools with registerPaidTool. Nothing was charged';

/**
 * The agentpay layer's own answer (the tool did not run): the REST seller's error body as
 * JSON text and, unless the tool declares an outputSchema (which a client would check it
 * against), as structuredContent; `_meta["agentpay/status"]` is the REST status.
 */
function answerResult(answer: Answer, structured: boolean): CallToolResult {
  const envelope = JSON.parse(new TextDecoder().decode(answer.body)) as PaymentEnvelope;
  return {
    content: [{ type: 'text', text: JSON.stringify(envelope) }],
    ...(structured ? { structuredContent: envelope } : {}),
    isError: true,
    _meta: { [STATUS_META]: answer.status },
  };
}

/**
 * The payment-required answer (no proof, or one in another dialect that could not be used: a
 * fresh challenge), in x402's MCP convention (specs/transports-v2/mcp.md): `structuredContent`
 * is the x402 v2 PaymentRequired (our signed challenge in the agentpay accepts entry's
 * `extra`), `content[0].text` its JSON. Our own envelope `{error, challenge}` goes in
 * `_meta["agentpay/error"]` (read first by envelopeOf), the MPP MCP challenge in
 * `_meta["org.paymentauth/payment-required"]`. A tool with an outputSchema gets no
 * structuredContent (MCP clients check it against that schema, error results too): x402
 * clients read the same PaymentRequired from content[0].text.
 */
function paymentRequiredResult(
  answer: Answer, challenge: PriceChallenge, structured: boolean,
  o: { toolName: string | undefined; capabilityId: string; seller: SellerPayments; exact: X402ExactOffer | undefined; exactRefusal: string | undefined },
): CallToolResult {
  const envelope = JSON.parse(new TextDecoder().decode(answer.body)) as PaymentEnvelope;
  envelope.error.message = `payment required: ${challenge.amountMinor} ${challenge.currency} minor units per call; call again with a signed proof in _meta["${PAYMENT_META}"]`;
  const required = x402PaymentRequired(challenge, {
    resourceUrl: `mcp://tool/${encodeURIComponent(o.toolName ?? o.capabilityId)}`,
    ...(o.seller.dialects?.network ? { network: o.seller.dialects.network } : {}),
    // an `exact` payment the gateway refused: x402's way, its reason is the error of a fresh PaymentRequired;
    // otherwise a client without our scheme is told what to install (as the HTTP 402's `error` does)
    error: o.exactRefusal ?? `${envelope.error.code}: ${envelope.error.message}; ${X402_CLIENT_HINT}`,
    ...(o.exact ? { exact: o.exact } : {}),
  });
  const realm = o.seller.dialects?.publicUrl ? new URL(o.seller.dialects.publicUrl).hostname : 'mcp';
  return {
    content: [{ type: 'text', text: JSON.stringify(required) }],
    ...(structured ? { structuredContent: required as unknown as Record<string, unknown> } : {}),
    isError: true,
    _meta: { [STATUS_META]: answer.status, [ERROR_META]: envelope, ...mcpPaymentRequiredMeta(challenge, realm) },
  };
}

/** A tool's output schema (zod, as McpServer checks it) and the check a client makes (client-check.ts). */
interface OutputChecks {
  schema: AnyObjectSchema;
  clientCheck: ClientCheck;
}

/**
 * The output checks of a tool, made on first use: a stateless server builds its tools per request,
 * and most of those requests (tools/list, unpaid calls) never check a result.
 */
function outputChecksOf(outputSchema: PaidToolOptions['outputSchema']): () => OutputChecks | undefined {
  let checks: OutputChecks | undefined;
  return () => {
    if (checks) return checks;
    const schema = normalizeObjectSchema(outputSchema);
    return schema && (checks = { schema, clientCheck: clientCheckOf(schema) });
  };
}

/**
 * Why structured content fails the tool's output schema, or null: zod (as McpServer checks it),
 * then the JSON Schema tools/list advertises (what the buyer's client checks; failing it here
 * refunds the buyer instead of charging for a result its client rejects).
 */
async function outputRefusal(checks: OutputChecks, structuredContent: unknown): Promise<string | null> {
  const parsed = await safeParseAsync(checks.schema, structuredContent);
  if (!parsed.success) return getParseErrorMessage(parsed.error);
  const refused = checks.clientCheck(structuredContent);
  return refused && `the structured content does not match the tool's advertised output schema (what MCP clients check; return exactly its fields, defaulted ones included): ${refused}`;
}

/**
 * A tool error as it is sent: without its structuredContent when that would not pass the tool's
 * output schema (or the schema cannot be checked). The MCP SDK's client checks structuredContent
 * against the listed schema on error results too, and throws when it fails: the buyer would lose
 * the error and its failed receipt (the proof of the refund). The content says what went wrong.
 */
async function errorAsSent(result: CallToolResult, outputChecks: () => OutputChecks | undefined): Promise<CallToolResult> {
  if (result.structuredContent === undefined) return result;
  let passes: boolean;
  try {
    const checks = outputChecks();
    passes = !checks || (await outputRefusal(checks, result.structuredContent)) === null;
  } catch {
    passes = false; // a schema that cannot be converted: nothing is known to pass it
  }
  if (passes) return result;
  const { structuredContent: _dropped, ...sent } = result;
  return sent;
}

/** Runs the tool and reduces every way it can end to the one result that is sent, and its hashed bytes. */
async function run(invoke: () => Promise<unknown>, outputChecks: () => OutputChecks | undefined, admitted: AdmittedDecision): Promise<{ result: CallToolResult; bytes: Uint8Array; threw: boolean }> {
  const failed = (text: string, threw: boolean) => {
    const result = errorResult(text);
    return { result, bytes: resultBytes(result), threw };
  };
  const ran = await runWithinDeadline(admitted, invoke);
  // a tool past its time is a provider error; what it returns later is dropped
  if (ran.kind === 'timeout') return failed(`the tool did not answer within ${admitted.timeoutMs} ms; you were refunded`, true);
  if (ran.kind === 'threw') return failed(ran.error instanceof Error ? ran.error.message : String(ran.error), true);
  const parsed = CallToolResultSchema.safeParse(ran.value);
  if (!parsed.success) return failed(`the tool returned a malformed result: ${getParseErrorMessage(parsed.error)}`, true);
  let result: CallToolResult;
  let bytes: Uint8Array;
  try {
    // exactly what travels (undefined members gone), so that what is hashed is what arrives, on any transport
    result = JSON.parse(JSON.stringify(parsed.data)) as CallToolResult;
    bytes = resultBytes(result);
  } catch (e) {
    return failed(`the tool returned a result that cannot be sent as JSON: ${e instanceof Error ? e.message : String(e)}`, true);
  }
  if (result.isError) {
    const sent = await errorAsSent(result, outputChecks);
    return { result: sent, bytes: sent === result ? bytes : resultBytes(sent), threw: false };
  }
  let checks: OutputChecks | undefined;
  try {
    checks = outputChecks();
  } catch (e) {
    // made on first use, so after the payment was authorized: refund rather than leave it held
    return failed(`the tool's outputSchema cannot be converted to the JSON Schema that tools/list advertises (${e instanceof Error ? e.message : String(e)}); you were refunded`, false);
  }
  if (checks) {
    // McpServer checks this only after the handler returned, when the call would already be paid
    if (result.structuredContent === undefined) return failed('Output validation error: no structured content was provided', false);
    const refused = await outputRefusal(checks, result.structuredContent);
    if (refused) return failed(`Output validation error: ${refused}`, false);
  }
  return { result, bytes, threw: false };
}

/**
 * Wraps a tool callback so that it runs only for paid calls; register the result with
 * `server.registerTool(name, config, paidToolCallback(cb, {seller, capabilityId, outputSchema}))`.
 * On a server with a task store, a paid callback runs only for calls that registerPaidTool's
 * guard saw without `params.task` (task-guard.ts): register paid tools with registerPaidTool there.
 */
export function paidToolCallback<InputArgs extends undefined | ZodRawShapeCompat | AnySchema>(cb: ToolCallback<InputArgs>, opts: PaidToolOptions): ToolCallback<InputArgs> {
  const seller = sellerOf(opts.seller);
  const structuredAnswers = opts.outputSchema === undefined;
  const outputChecks = outputChecksOf(opts.outputSchema);
  const wrapped = async (...args: unknown[]): Promise<CallToolResult> => {
    const done = track(seller);
    try {
      // (args, extra) for a tool with an inputSchema, (extra) without one
      const extra = args[args.length - 1] as { _meta?: Record<string, unknown>; taskStore?: unknown };
      // a task-augmented call would be charged and then answered with an error (task-guard.ts)
      if (mayBeTaskCall(extra)) return errorResult(TASK_CALL_REFUSED);
      // the gateway's x402 `exact` offer (USDC on its chain), when it has one: offered and read beside ours
      const exact = seller.exactOffer ? await seller.exactOffer() : undefined;
      // ours first, then the MPP MCP credential, then x402's MCP PaymentPayload (an unusable one: answered as unpaid)
      const ours = extra._meta?.[PAYMENT_META] as string | Record<string, unknown> | undefined;
      const other = ours === undefined ? readMcpPayment(extra._meta, exact !== undefined) : undefined;
      const payment = ours ?? (other?.kind === 'payment' ? (other.payment as unknown as Record<string, unknown>) : undefined);
      let decision: Decision;
      let exactRefusal: string | undefined;
      if (other?.kind === 'exact' && seller.admitExact) {
        // verified (and reserved) by the gateway before the tool runs; settled on chain after it succeeded
        const admission = await seller.admitExact(opts.capabilityId, other.payload as unknown as Record<string, unknown>);
        if (admission.kind === 'admitted') decision = { kind: 'admitted', call: admission.call, timeoutMs: seller.handlerTimeoutMs ?? 0, context: {}, dialect: { name: 'x402' } };
        else if (admission.kind === 'refusal' && admission.status === 402) {
          exactRefusal = refusalReason(admission);
          decision = await decide(seller, { capabilityId: opts.capabilityId, payment: undefined });
        } else if (admission.kind === 'replay') return errorResult('agentpay: an x402 "exact" payment is never replayed');
        else decision = admission;
      } else {
        // sessions need the tool's name: it is what a voucher's request hash covers
        const sessionSource = seller.sessions && opts.toolName !== undefined ? sessionSourceOf(extra._meta, opts.toolName) : undefined;
        decision = await decide(seller, { capabilityId: opts.capabilityId, payment, ...(sessionSource ? { sessionSource } : {}) });
      }
      if (decision.kind === 'free') throw new Error('agentpay: a paid tool needs a capabilityId'); // not reached: capabilityId is required
      if (decision.kind === 'session') return sessionStepResult(decision);
      if (decision.kind !== 'admitted') {
        if (decision.kind !== 'challenge') return answerResult(decision, structuredAnswers);
        return paymentRequiredResult(decision, decision.challenge, structuredAnswers, { toolName: opts.toolName, capabilityId: opts.capabilityId, seller, exact, exactRefusal });
      }

      // the tool reads its call (a metered one reports usage: paidToolCallOf(extra)?.charge(units))
      if (extra && typeof extra === 'object') paidToolCalls.set(extra, decision.call);
      const { result, bytes, threw } = await run(async () => (cb as (...a: unknown[]) => unknown)(...args), outputChecks, decision);
      if (decision.call.session) {
        // paid with a voucher: charged only when the tool succeeded (a metered one: what it reported), the seller's own receipt
        const receipt = await settleSessionCall(seller, decision.call.session, !threw && result.isError !== true, bytes, chargedFor(decision.call));
        return { ...result, _meta: { ...result._meta, ...(receipt ? { [SESSION_RECEIPT_META]: receipt } : {}) } };
      }
      const settled = await seller.settle(decision.call, { body: bytes, threw, isError: result.isError === true });
      const dialect = settled.exact ? { [X402_MCP_PAYMENT_RESPONSE_META]: x402ExactSettlementResponse(settled.exact) }
        : other?.kind === 'payment' && settled.receipt
          ? mcpReceiptMeta(other.dialect, settled.receipt, { ...(seller.dialects?.network ? { network: seller.dialects.network } : {}), ...(other.challengeId ? { challengeId: other.challengeId } : {}) })
          : {};
      return { ...result, _meta: { ...result._meta, ...(settled.receipt ? { [RECEIPT_META]: settled.receipt } : {}), ...dialect } };
    } finally {
      done();
    }
  };
  return wrapped as unknown as ToolCallback<InputArgs>;
}

// ---- the paid call, as the tool sees it ----

const paidToolCalls = new WeakMap<object, PaidCall>();

/**
 * The paid call a tool callback runs for, from the `extra` its callback was given (null for a call
 * that was not paid through agentpay). A metered capability's tool reports the units it used with
 * `paidToolCallOf(extra)?.charge(units)`: the call is charged units × unit price, and the rest of
 * what the buyer authorized goes back to it (docs/protocol.md § Metered prices).
 */
export function paidToolCallOf(extra: object): PaidCall | null {
  return paidToolCalls.get(extra) ?? null;
}

// ---- calls in flight, for a server that is asked to stop ----

/** Paid-tool calls of each seller that started and are not settled yet (an authorization may hold a buyer's money). */
const inFlight = new WeakMap<SellerPayments, { count: number; idle: Set<() => void> }>();

function track(seller: SellerPayments): () => void {
  let state = inFlight.get(seller);
  if (!state) inFlight.set(seller, (state = { count: 0, idle: new Set() }));
  const s = state;
  s.count++;
  return () => {
    if (--s.count > 0) return;
    for (const resolve of s.idle) resolve();
    s.idle.clear();
  };
}

/**
 * Resolves true once no paid-tool call of `seller` (the one instance its tools were registered
 * with) is in flight, or false after `timeoutMs` (default: its handlerTimeoutMs, or 30 s without
 * one, plus 10 s for the settlement's retries). A server about to exit (the host closed stdin,
 * SIGTERM) waits for it: a call stopped between authorize and settle leaves the buyer's money
 * held until the gateway releases it (15 minutes). Call it once no new calls can arrive.
 */
export async function paidCallsSettled(seller: SellerPayments, opts: { timeoutMs?: number } = {}): Promise<boolean> {
  // a request already read from the transport reaches its tool callback within the same turn
  await new Promise<void>((r) => setImmediate(r));
  const state = inFlight.get(seller);
  if (!state || state.count === 0) return true;
  const timeoutMs = opts.timeoutMs ?? (seller.handlerTimeoutMs || DEFAULT_HANDLER_TIMEOUT_MS) + 10_000;
  let timer: NodeJS.Timeout | undefined;
  let onIdle: (() => void) | undefined;
  try {
    return await Promise.race([
      new Promise<boolean>((r) => state.idle.add((onIdle = () => r(true)))),
      new Promise<boolean>((r) => { timer = setTimeout(() => r(false), timeoutMs); }),
    ]);
  } finally {
    clearTimeout(timer);
    if (onIdle) state.idle.delete(onIdle);
  }
}

/**
 * `server.registerTool` for a paid tool: the same config plus `seller` and `capabilityId`.
 * tools/list shows the capability in the tool's `_meta["agentpay/capabilityId"]`. A call of it
 * with `params.task` is refused with -32601 before anything is charged (task-guard.ts).
 */
export function registerPaidTool<OutputArgs extends ZodRawShapeCompat | AnySchema, InputArgs extends undefined | ZodRawShapeCompat | AnySchema = undefined>(
  server: McpServer,
  name: string,
  config: PaidToolConfig<InputArgs, OutputArgs>,
  cb: ToolCallback<InputArgs>,
): RegisteredTool {
  const { seller, capabilityId, _meta, ...toolConfig } = config;
  const callback = paidToolCallback(cb, { seller, capabilityId, outputSchema: config.outputSchema, toolName: name });
  const tool = server.registerTool<OutputArgs, InputArgs>(name, { ...toolConfig, _meta: { ..._meta, [CAPABILITY_META]: capabilityId } }, callback);
  guardTaskCalls(server, tool, name);
  return tool;
}

export { createSellerPayments, type SellerOptions, type SellerPayments } from '../seller/core.js';
export {
  CAPABILITY_META, ERROR_META, PAYMENT_META, RECEIPT_META, SESSION_CLOSE_META, SESSION_GRANT_META, SESSION_OPEN_META, SESSION_RECEIPT_META, SESSION_TOPUP_META, STATUS_META, VOUCHER_META, resultBytes,
} from './protocol.js';
