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

/** The agentpay answer inside a tool result, or null when the result came from the tool itself. */
export function envelopeOf(result: CallToolResult): { status: number; envelope: PaymentEnvelope } | null {
  const status = result._meta?.[STATUS_META];
  if (result.isError !== true || typeof status !== 'number') return null;
  let envelope: unknown = result.structuredContent;
  if (envelope === undefined) {
    const first = result.content?.[0];
    try {
      envelope = first?.type === 'text' ? JSON.parse(first.text) : undefined;
    } catch {
      envelope = undefined;
    }
  }
  const e = envelope as PaymentEnvelope | undefined;
  if (!e || typeof e !== 'object' || typeof e.error?.code !== 'string') return null;
  return { status, envelope: e };
}
