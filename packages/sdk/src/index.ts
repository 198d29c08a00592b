/**
 * agentpay-sdk: the public surface in one import. Framework adapters whose peer dependency is heavy
 * (fastify, the MCP SDK) are subpath exports only: `agentpay-sdk/seller/fastify`,
 * `agentpay-sdk/mcp/seller`, `agentpay-sdk/mcp/buyer`. Nothing here needs Node: it runs in browsers,
 * Deno, Bun and Cloudflare Workers too.
 */
export { AgentpayClient, HttpClient, type ClientOptions, type RawResponse, type RequestOptions } from './client/index.js';
export type * from './types.js';
export { AgentpayError } from './errors.js';
export { createBuyer, PAID_BUT_UNANSWERED, type Buyer, type BuyerOptions, type BuyerRequestInit, type PaidResponse, type Purchase } from './buyer/index.js';
export { createPayer, DEFAULT_MAX_PRICE_MINOR, type ApprovalWaitOptions, type Payer, type PayerOptions, type ProofSigner } from './buyer/payer.js';
export {
  PAYMENT_HEADER, RECEIPT_HEADER, decodeHeader, encodeHeader, responseHash, isPriceChallenge, isReceipt, paymentRequiredBody,
  type PaymentRequiredBody, type PriceChallenge, type UnsignedPaymentProof,
} from './protocol.js';
export {
  generateKeyPair, publicKeyOf, signBytes, verifyBytes, signObject, verifyObject, SigningKeyError,
  type PrivateKeyInput, type PublicKeyInput,
} from './signing.js';
export { verifyWebhookSignature, WebhookSignatureError, SIGNATURE_HEADER as WEBHOOK_SIGNATURE_HEADER, type WebhookEvent } from './webhooks.js';
// payment sessions (docs/protocol.md § Payment sessions): the buyer's session and the seller's voucher checker
export { openRequest, PendingSession, BuyerSession, type OpenRequestOptions } from './buyer/session.js';
export {
  SessionChecker, SessionError, MemoryVoucherStore,
  type SessionCheckerOptions, type SessionRefusal, type VoucherDecision, type VoucherRecord, type VoucherStore,
} from './seller/sessions.js';
