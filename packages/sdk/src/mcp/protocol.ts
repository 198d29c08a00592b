/**
 * The payment protocol over MCP tool calls (docs/protocol.md, "Paid MCP tools"): the
 * `_meta` keys that carry the proof and the receipt, the shape of the payment-required
 * and refusal results, and the exact bytes a tool result's `responseHash` covers.
 * Shared by the seller wrapper (seller.ts) and the paying client (buyer.ts).
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { canonicalize } from '../contract/canonical-json.js';

/** Request `_meta` key: the buyer's signed payment proof (the object, or its x-payment header value). */
export const PAYMENT_META = 'agentpay/payment';
/** Result `_meta` key: the platform-signed receipt of a paid call (the object). */
export const RECEIPT_META = 'agentpay/receipt';
/**
 * Result `_meta` key, present only on an answer of the agentpay layer itself (the tool did
 * not run): the HTTP status a REST seller would have answered, e.g. 402.
 */
export const STATUS_META = 'agentpay/status';
/**
 * Result `_meta` key of a payment-required answer: our envelope `{error, challenge}` (the REST
 * seller's 402 body), there because structuredContent and content carry x402's PaymentRequired.
 */
export const ERROR_META = 'agentpay/error';
/** Tool `_meta` key in tools/list: the capability a paid tool sells. */
export const CAPABILITY_META = 'agentpay/capabilityId';

/** What an agentpay answer carries: the REST seller's error body, `{error: {code, message, details?}, challenge?, …}`. */
export interface PaymentEnvelope {
  error: { code: string; message: string; details?: Record<string, unknown> };
  [field: string]: unknown;
}

/**
 * The bytes a tool result's `responseHash` covers: the UTF-8 canonical JSON (keys sorted,
 * no whitespace) of `{content, structuredContent?, isError?}` taken from the result as it
 * travels (after MCP's CallToolResult schema; `content` is [] when absent). `_meta` (where
 * the receipt goes) and any other top-level field are not covered.
 */
export function resultBytes(result: Pick<CallToolResult, 'content' | 'structuredContent' | 'isError'>): Uint8Array {
  const covered: Record<string, unknown> = { content: result.content ?? [] };
  if (result.structuredContent !== undefined) covered.structuredContent = result.structuredContent;
  if (result.isError !== undefined) covered.isError = result.isError;
  // a JSON round trip first: undefined members vanish exactly as they do on the wire
  return new TextEncoder().encode(canonicalize(JSON.parse(JSON.stringify(covered))));
}

const isEnvelope = (v: unknown): v is PaymentEnvelope =>
  !!v && typeof v === 'object' && typeof (v as PaymentEnvelope).error?.code === 'string';

/**
 * The agentpay answer inside a tool result, or null when the result came from the tool itself:
 * `_meta["agentpay/error"]` (a payment-required answer, whose structuredContent and content are
 * x402's PaymentRequired), else structuredContent, else the JSON of content[0].text (the other
 * refusals, and sellers from before the x402 MCP convention).
 */
export function envelopeOf(result: CallToolResult): { status: number; envelope: PaymentEnvelope } | null {
  const status = result._meta?.[STATUS_META];
  if (result.isError !== true || typeof status !== 'number') return null;
  const meta = result._meta?.[ERROR_META];
  if (isEnvelope(meta)) return { status, envelope: meta };
  if (isEnvelope(result.structuredContent)) return { status, envelope: result.structuredContent };
  const first = result.content?.[0];
  let envelope: unknown;
  try {
    envelope = first?.type === 'text' ? JSON.parse(first.text) : undefined;
  } catch {
    envelope = undefined;
  }
  return isEnvelope(envelope) ? { status, envelope } : null;
}
