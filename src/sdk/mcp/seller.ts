/**
 * `agentpay/mcp/seller`: paid MCP tools on an McpServer (@modelcontextprotocol/sdk).
 *
 *   const seller = createSellerPayments({ gatewayUrl, apiKey, ca });
 *   registerPaidTool(server, 'forecast', { seller, capabilityId, description, inputSchema: { city: z.string() } },
 *     async ({ city }) => ({ content: [{ type: 'text', text: `sunny in ${city}` }] }));
 *
 * The same two steps as the REST middleware (../seller/core.ts), over a tool call:
 * - no proof in the call's `_meta["agentpay/payment"]`: the tool does not run; the result is a
 *   tool error carrying the signed price challenge (docs/protocol.md, "Paid MCP tools");
 * - a proof: the gateway authorizes it (a refusal is answered the same way), then the tool runs;
 * - the tool's result is normalized as it will travel, hashed (resultBytes), and the call
 *   completed; `isError`, a throw, or structured content that fails the tool's outputSchema
 *   fail it as provider_error (the buyer is refunded). The receipt goes back in the result's
 *   `_meta["agentpay/receipt"]`.
 */
import type { McpServer, RegisteredTool, ToolCallback } from '@modelcontextprotocol/sdk/server/mcp.js';
import { getParseErrorMessage, normalizeObjectSchema, safeParseAsync, type AnySchema, type ZodRawShapeCompat } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import { CallToolResultSchema, type CallToolResult, type ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { createSellerPayments, type ImmediateAnswer, type SellerOptions, type SellerPayments } from '../seller/core.js';
import { CAPABILITY_META, PAYMENT_META, RECEIPT_META, resultBytes, STATUS_META, type PaymentEnvelope } from './protocol.js';

export interface PaidToolOptions {
  /** the seller's gateway connection: one `createSellerPayments(...)` for every tool, or its options */
  seller: SellerPayments | SellerOptions;
  /** the capability (protocol `mcp`) this tool sells */
  capabilityId: string;
  /** the tool's outputSchema: structured content that fails it is a provider error, not a sale */
  outputSchema?: ZodRawShapeCompat | AnySchema | undefined;
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
 * The agentpay layer's own answer (the tool did not run): the REST seller's error body as
 * JSON text and, unless the tool declares an outputSchema (which a client would check it
 * against), as structuredContent; `_meta["agentpay/status"]` is the REST status.
 */
function answerResult(answer: ImmediateAnswer, structured: boolean): CallToolResult {
  const envelope = JSON.parse(answer.body.toString('utf8')) as PaymentEnvelope;
  if (envelope.error.code === 'PAYMENT_REQUIRED' && envelope.challenge) {
    const c = envelope.challenge as { amountMinor: string; currency: string };
    envelope.error.message = `payment required: ${c.amountMinor} ${c.currency} minor units per call; call again with a signed proof in _meta["${PAYMENT_META}"]`;
  }
  return {
    content: [{ type: 'text', text: JSON.stringify(envelope) }],
    ...(structured ? { structuredContent: envelope } : {}),
    isError: true,
    _meta: { [STATUS_META]: answer.status },
  };
}

/** Runs the tool and reduces every way it can end to the one result that is sent, and its hashed bytes. */
async function run(invoke: () => Promise<unknown>, outputSchema: PaidToolOptions['outputSchema'], timeoutMs: number): Promise<{ result: CallToolResult; bytes: Uint8Array; threw: boolean }> {
  const failed = (text: string, threw: boolean) => {
    const result = errorResult(text);
    return { result, bytes: resultBytes(result), threw };
  };
  let raw: unknown;
  let deadline: NodeJS.Timeout | undefined;
  try {
    const timedOut = Symbol('timeout');
    const outcome = timeoutMs > 0
      ? await Promise.race([invoke(), new Promise<typeof timedOut>((r) => { deadline = setTimeout(() => r(timedOut), timeoutMs); })])
      : await invoke();
    // a tool past its time is a provider error; what it returns later is dropped
    if (outcome === timedOut) return failed(`the tool did not answer within ${timeoutMs} ms; you were refunded`, true);
    raw = outcome;
  } catch (e) {
    return failed(e instanceof Error ? e.message : String(e), true);
  } finally {
    clearTimeout(deadline);
  }
  const parsed = CallToolResultSchema.safeParse(raw);
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
  const schema = normalizeObjectSchema(outputSchema);
  if (schema && !result.isError) {
    // McpServer checks this only after the handler returned, when the call would already be paid
    const check = result.structuredContent === undefined
      ? { success: false as const, error: 'no structured content was provided' }
      : await safeParseAsync(schema, result.structuredContent);
    if (!check.success) return failed(`Output validation error: ${typeof check.error === 'string' ? check.error : getParseErrorMessage(check.error)}`, false);
  }
  return { result, bytes, threw: false };
}

/**
 * Wraps a tool callback so that it runs only for paid calls; register the result with
 * `server.registerTool(name, config, paidToolCallback(cb, {seller, capabilityId, outputSchema}))`.
 */
export function paidToolCallback<InputArgs extends undefined | ZodRawShapeCompat | AnySchema>(cb: ToolCallback<InputArgs>, opts: PaidToolOptions): ToolCallback<InputArgs> {
  const seller = sellerOf(opts.seller);
  const structuredAnswers = opts.outputSchema === undefined;
  const wrapped = async (...args: unknown[]): Promise<CallToolResult> => {
    // (args, extra) for a tool with an inputSchema, (extra) without one
    const extra = args[args.length - 1] as { _meta?: Record<string, unknown> };
    const payment = extra._meta?.[PAYMENT_META] as string | Record<string, unknown> | undefined;
    const admission = await seller.admit(opts.capabilityId, payment);
    if (admission.kind === 'answer') return answerResult(admission, structuredAnswers);

    const { result, bytes, threw } = await run(async () => (cb as (...a: unknown[]) => unknown)(...args), opts.outputSchema, seller.handlerTimeoutMs ?? 0);
    const settled = await seller.settle(admission.call, { body: bytes, threw, isError: result.isError === true });
    return { ...result, _meta: { ...result._meta, ...(settled.receipt ? { [RECEIPT_META]: settled.receipt } : {}) } };
  };
  return wrapped as unknown as ToolCallback<InputArgs>;
}

/**
 * `server.registerTool` for a paid tool: the same config plus `seller` and `capabilityId`.
 * tools/list shows the capability in the tool's `_meta["agentpay/capabilityId"]`.
 */
export function registerPaidTool<OutputArgs extends ZodRawShapeCompat | AnySchema, InputArgs extends undefined | ZodRawShapeCompat | AnySchema = undefined>(
  server: McpServer,
  name: string,
  config: PaidToolConfig<InputArgs, OutputArgs>,
  cb: ToolCallback<InputArgs>,
): RegisteredTool {
  const { seller, capabilityId, _meta, ...toolConfig } = config;
  const callback = paidToolCallback(cb, { seller, capabilityId, outputSchema: config.outputSchema });
  return server.registerTool<OutputArgs, InputArgs>(name, { ...toolConfig, _meta: { ..._meta, [CAPABILITY_META]: capabilityId } }, callback);
}

export { createSellerPayments, type SellerOptions, type SellerPayments } from '../seller/core.js';
export { CAPABILITY_META, PAYMENT_META, RECEIPT_META, STATUS_META, resultBytes } from './protocol.js';
