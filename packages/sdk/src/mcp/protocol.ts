/**
 * The payment protocol over MCP tool calls (docs/protocol.md, "Paid MCP tools"): the
 * `_meta` keys that carry the proof and the receipt, the shape of the payment-required
 * and refusal results, and the exact bytes a tool result's `responseHash` covers.
 * Shared by the seller wrapper (seller.ts) and the paying client (buyer.ts).
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { canonicalize } from '../contract/canonical-json.js';
import { SESSION_CLOSE_HEADER, SESSION_OPEN_HEADER, SESSION_TOPUP_HEADER, VOUCHER_HEADER } from '../contract/sessions.js';
import { requestFingerprint } from '../seller/idempotency.js';

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

// ---- payment sessions over MCP (docs/protocol.md § Sessions over MCP) ----

/** Request `_meta` key: the buyer's signed open request (SessionOpen, the object); answered with the grant in SESSION_GRANT_META. */
export const SESSION_OPEN_META = 'agentpay/session-open';
/** Request `_meta` key: the buyer's signed top-up (SessionTopUp); answered with the raised grant in SESSION_GRANT_META. */
export const SESSION_TOPUP_META = 'agentpay/session-topup';
/** Request `_meta` key: the buyer's close, signed by the session key (SessionCloseRequest); answered with the closed session. */
export const SESSION_CLOSE_META = 'agentpay/session-close';
/** Request `_meta` key: the voucher that pays this call (Voucher). */
export const VOUCHER_META = 'agentpay/voucher';
/** Result `_meta` key: the platform-signed grant of an open or a top-up (SessionGrant). */
export const SESSION_GRANT_META = 'agentpay/session-grant';
/** Result `_meta` key: the seller-signed receipt of a call paid with a voucher (SessionReceipt). */
export const SESSION_RECEIPT_META = 'agentpay/session-receipt';

/** Each session step's `_meta` key, by the name of the header that carries it over HTTP (contract/sessions.ts). */
export const SESSION_STEP_META: Readonly<Record<string, string>> = {
  [SESSION_OPEN_HEADER]: SESSION_OPEN_META,
  [SESSION_TOPUP_HEADER]: SESSION_TOPUP_META,
  [SESSION_CLOSE_HEADER]: SESSION_CLOSE_META,
  [VOUCHER_HEADER]: VOUCHER_META,
};

/** The path a tool's calls stand for in a voucher's request hash: `mcp://tool/<name>`. */
export const toolPath = (name: string): string => `mcp://tool/${encodeURIComponent(name)}`;

/** The request hash a voucher paying a call of `tool` carries: requestFingerprint('POST', toolPath(tool)) (the arguments are not covered). */
export const toolRequestHash = (tool: string): Promise<string> => requestFingerprint('POST', toolPath(tool));

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
