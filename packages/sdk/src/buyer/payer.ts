/**
 * The buyer's side of the payment protocol, free of any transport: what the REST buyer
 * (index.ts, over fetch and headers) and the MCP buyer (../mcp/buyer.ts, over tool calls
 * and `_meta`) both do with a challenge, a proof and a receipt.
 *
 *   verifiedChallenge(answer) -> the challenge, checked against the platform key (or null:
 *                                not the protocol's payment-required answer)
 *   signProof(challenge)      -> refuses a challenge for another capability than the one
 *                                meant, a price above the ceiling and an expired quote
 *                                (nothing signed), else the signed proof
 *   verifiedReceipt(receipt, bytes, challenge) -> checked against the platform key, the
 *                                challenge paid and the exact bytes received
 *   withApproval(attempt)     -> an attempt held by APPROVAL_REQUIRED waits for a person,
 *                                then runs once more (or throws APPROVAL_DENIED)
 *
 * Runs in Node, browsers and edge runtimes: no Node imports.
 */
import { AgentpayClient } from '../client/index.js';
import { AgentpayError } from '../errors.js';
import { isPriceChallenge, isReceipt, responseHash, type PaymentProof, type PriceChallenge, type Receipt, type UnsignedPaymentProof } from '../protocol.js';
import { privateKeyPemToSeed, signObject, SigningKeyError, verifyObject } from '../signing.js';
import { missingSetting, withEnvDefaults, type EnvOption } from '../settings.js';

/**
 * The ceiling a buyer applies when it is given none: 100 minor units, 1.00 USD, per call. Pay-per-call
 * prices are small (the demo sells at 1.00, `agentpay init`'s example at 0.25), so an agent seldom
 * meets a higher quote, and a seller that quotes more (a mistake, a changed price, a hostile endpoint)
 * costs at most 1.00 per call before a person raises the ceiling on purpose (docs/sdk.md).
 */

/**
 * A metered call's success receipt (docs/protocol.md § Metered prices): it may charge less than the
 * challenge authorized, exactly its signed usage (units × unit price of the challenge's metering),
 * never more than the maximum authorized.
 */
function meteredWithin(r: Receipt, challenge: PriceChallenge): boolean {
  const m = challenge.metering;
  const u = r.usage;
  if (!m || !u || r.status !== 'success') return false;
  if (u.unit !== m.unit || u.unitPriceMinor !== m.unitPriceMinor || u.authorizedMinor !== challenge.amountMinor) return false;
  const charged = BigInt(r.amount.amountMinor);
  return charged === BigInt(u.units) * BigInt(u.unitPriceMinor) && charged <= BigInt(challenge.amountMinor);
}

export const DEFAULT_MAX_PRICE_MINOR = '100';

/** Signs the canonical proof (without `signature`) with the agent's key; returns base64 ed25519. */
export type ProofSigner = (proof: UnsignedPaymentProof) => Promise<string> | string;

/**
 * gatewayUrl, ca, walletId and privateKeyPem not given are read from the environment (EnvOption:
 * AGENTPAY_GATEWAY_URL, AGENTPAY_CA, AGENTPAY_WALLET_ID, AGENTPAY_PRIVATE_KEY_FILE, as
 * `agentpay dev env --role buyer` prints them; ../settings.ts). An option given wins.
 */
export interface PayerOptions extends EnvOption {
  /** the gateway that issues challenges and receipt keys (default: AGENTPAY_GATEWAY_URL) */
  gatewayUrl?: string;
  /** PEM of a CA to trust for the gateway (Node only; default: the file AGENTPAY_CA names) */
  ca?: string;
  /** the agent wallet that pays (default: AGENTPAY_WALLET_ID) */
  walletId?: string;
  /** the agent's ed25519 private key (PKCS#8 PEM), registered on the wallet by its public half (default: the file AGENTPAY_PRIVATE_KEY_FILE names) */
  privateKeyPem?: string;
  /** or a signer, e.g. backed by a KMS or a hardware key */
  signer?: ProofSigner;
  /**
   * the most this buyer pays for one call, in integer minor units; default DEFAULT_MAX_PRICE_MINOR
   * ("100", 1.00 in the currency). A price above it is refused with PRICE_ABOVE_CLIENT_LIMIT before
   * anything is signed. Raise it for dearer capabilities; a call's own `maxPriceMinor` overrides it.
   */
  maxPriceMinor?: string | bigint;
  /** clock for the expiry check (tests) */
  now?: () => number;
  /**
   * Pinned platform keys (signingKeyId -> SPKI PEM): challenges and receipts are checked against
   * these only, and the gateway is never asked. Absent: looked up on the gateway once per key id.
   */
  platformKeys?: Record<string, string>;
}

/** How a purchase held for a person's approval is waited on. */
export interface ApprovalWaitOptions {
  /** a client whose key holds approvals:read (the agent preset does): it reads the approval's status */
  approvals: AgentpayClient;
  /** how often to look, default 2000 ms */
  pollMs?: number;
  /** how long to wait for a decision, default 10 minutes; then APPROVAL_REQUIRED is thrown as it came */
  timeoutMs?: number;
  /** stops the wait (CANCELLED; nothing charged); default: the call's signal */
  signal?: AbortSignal;
  /** told the approval id once the purchase is held, e.g. to ask a person */
  onPending?: (approvalId: string) => void;
}

export interface Payer {
  readonly walletId: string;
  /**
   * The challenge of a seller's payment-required answer (`{error: {code: "PAYMENT_REQUIRED"}, challenge}`),
   * verified against the platform key; null when the answer is not the protocol's.
   * Throws INVALID_CHALLENGE for a malformed or unsigned one.
   */
  verifiedChallenge(answer: unknown): Promise<PriceChallenge | null>;
  /**
   * Refuses CHALLENGE_MISMATCH (the challenge names another capability than `capabilityId`, the
   * one the buyer meant to buy), PRICE_ABOVE_CLIENT_LIMIT and CHALLENGE_EXPIRED (nothing signed),
   * else signs the proof.
   */
  signProof(challenge: PriceChallenge, opts?: { maxPriceMinor?: string | bigint | undefined; signal?: AbortSignal | undefined; capabilityId?: string | undefined }): Promise<PaymentProof>;
  /**
   * A receipt that arrived with a paid answer, checked against the platform key, the challenge
   * paid and the exact bytes received; null when none came. Throws INVALID_RECEIPT.
   * `bytes` null: the body is not at hand (an x402 response hook); all but the hash is checked.
   */
  verifiedReceipt(receipt: unknown, bytes: Uint8Array | null, challenge: PriceChallenge): Promise<Receipt | null>;
  /**
   * The checks signProof makes before it signs (CHALLENGE_MISMATCH, PRICE_ABOVE_CLIENT_LIMIT,
   * CHALLENGE_EXPIRED), without signing: a session is opened only for a challenge that passes them.
   */
  checkChallenge?(challenge: PriceChallenge, opts?: { maxPriceMinor?: string | bigint | undefined; capabilityId?: string | undefined }): void;
  /** The platform's public key (SPKI PEM) of a key id, or null when the gateway does not know it. */
  platformKey?(keyId: string): Promise<string | null>;
  /** Signs an object's canonical JSON with the wallet's key (base64); absent when the buyer was given a signer for proofs only. */
  signWithWalletKey?(unsigned: Record<string, unknown>): Promise<string>;
  /** Runs `attempt`; if a policy holds it for a person, waits for the decision and runs it once more. */
  withApproval<T>(attempt: () => Promise<T>, wait: ApprovalWaitOptions, signal?: AbortSignal): Promise<T>;
}

export function cancelled(): AgentpayError {
  return new AgentpayError('CANCELLED', 'the purchase was cancelled before the payment proof was sent; nothing was charged');
}

export function isAbort(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { name?: string }).name === 'AbortError';
}

export function ceilingOf(v: string | bigint | undefined, field: string): bigint | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'bigint') return v;
  if (!/^(0|[1-9][0-9]*)$/.test(v)) throw new AgentpayError('VALIDATION_FAILED', `${field}: must be a string of integer minor units, e.g. "500"`, { details: { field } });
  return BigInt(v);
}

/**
 * A malformed agent key is refused when the buyer is created, not at the first paid call (after the
 * seller was reached): VALIDATION_FAILED naming privateKeyPem and the form expected.
 */
function checkPrivateKey(pem: unknown): void {
  const refuse = (problem: string) =>
    new AgentpayError('VALIDATION_FAILED', `privateKeyPem ${problem}; pass the agent's ed25519 private key as PKCS#8 PEM ("-----BEGIN PRIVATE KEY-----", as generateKeyPair() or \`openssl genpkey -algorithm ed25519\` write it), the key whose public half is registered on the wallet, or pass a signer`, {
      details: { field: 'privateKeyPem' },
    });
  if (typeof pem !== 'string') throw refuse(`is a ${pem === null ? 'null' : typeof pem}, not a PEM string`);
  if (/-----BEGIN PUBLIC KEY-----/.test(pem)) throw refuse('is a public key: the buyer signs with the private key');
  if (/-----BEGIN ENCRYPTED PRIVATE KEY-----/.test(pem)) throw refuse('is encrypted: decrypt it first');
  try {
    privateKeyPemToSeed(pem);
  } catch (e) {
    if (e instanceof SigningKeyError) throw refuse(e.message);
    throw e;
  }
}

export function createPayer(given: PayerOptions = {}): Payer {
  const opts = withEnvDefaults(given, given.signer ? ['gatewayUrl', 'ca', 'walletId'] : ['gatewayUrl', 'ca', 'walletId', 'privateKeyPem']) as PayerOptions & { gatewayUrl: string; walletId: string };
  if (!opts.gatewayUrl) throw missingSetting('createBuyer', 'gatewayUrl');
  if (!opts.walletId) throw missingSetting('createBuyer', 'walletId');
  if (!opts.privateKeyPem && !opts.signer) throw missingSetting('createBuyer', 'privateKeyPem', ' (the agent key; or pass a signer)');
  if (opts.privateKeyPem !== undefined && !opts.signer) checkPrivateKey(opts.privateKeyPem);
  const gateway = new AgentpayClient({ gatewayUrl: opts.gatewayUrl, env: false, ...(opts.ca ? { ca: opts.ca } : {}) });
  const now = opts.now ?? Date.now;
  const defaultCeiling = ceilingOf(opts.maxPriceMinor ?? DEFAULT_MAX_PRICE_MINOR, 'maxPriceMinor')!;
  const ceilingIsDefault = opts.maxPriceMinor === undefined;
  const sign: ProofSigner = opts.signer ?? ((proof) => signObject(opts.privateKeyPem!, proof as unknown as Record<string, unknown>));

  // Platform keys by id: one lookup per key, ever (old receipt keys stay retrievable after rotation).
  const keys = new Map<string, Promise<string | null>>();
  const platformKey = (keyId: string): Promise<string | null> => {
    if (opts.platformKeys) return Promise.resolve(Object.hasOwn(opts.platformKeys, keyId) ? opts.platformKeys[keyId]! : null);
    let p = keys.get(keyId);
    if (!p) {
      p = gateway.platform.receiptKey(keyId).then(
        (k) => k.publicKeyPem,
        (e) => {
          keys.delete(keyId); // a network failure is not remembered
          if (e instanceof AgentpayError && e.status === 404) return null;
          if (!(e instanceof AgentpayError) || e.code !== 'GATEWAY_UNAVAILABLE' || e.status !== undefined) throw e;
          // unreachable, TLS refused, DNS: said in terms of what the buyer was doing
          const cause = String(e.details.cause ?? e.message);
          throw new AgentpayError('GATEWAY_UNAVAILABLE', `could not reach the gateway ${opts.gatewayUrl} for platform key ${keyId} (${cause}); check gatewayUrl and ca, then retry`, {
            details: { gatewayUrl: opts.gatewayUrl, signingKeyId: keyId },
            cause: e.cause,
          });
        },
      );
      keys.set(keyId, p);
    }
    return p;
  };

  /** Resolves with the approval once a person decided; throws CANCELLED on abort, or the held error on timeout. */
  async function decisionOn(approvalId: string, held: AgentpayError, wait: ApprovalWaitOptions, signal: AbortSignal | undefined) {
    const pollMs = wait.pollMs ?? 2000;
    const deadline = Date.now() + (wait.timeoutMs ?? 10 * 60_000);
    for (;;) {
      if (signal?.aborted) throw cancelled();
      const { approval } = await wait.approvals.approvals.get(approvalId, signal ? { signal } : {}).catch((e: unknown) => {
        throw isAbort(e) || signal?.aborted ? cancelled() : e;
      });
      if (approval.status !== 'pending') return approval;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new AgentpayError('APPROVAL_REQUIRED', `approval ${approvalId} is still pending after ${wait.timeoutMs ?? 600_000} ms; ask a person to decide, then retry once`, {
          status: held.status, details: held.details, body: held.body,
        });
      }
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, Math.min(pollMs, left));
        signal?.addEventListener('abort', done, { once: true });
      });
    }
  }

  function checkChallenge(challenge: PriceChallenge, { maxPriceMinor, capabilityId }: { maxPriceMinor?: string | bigint | undefined; capabilityId?: string | undefined } = {}): void {
    if (capabilityId !== undefined && challenge.capabilityId !== capabilityId) {
      throw new AgentpayError('CHALLENGE_MISMATCH', `the seller asked payment for capability ${challenge.capabilityId}, not ${capabilityId}, the one this purchase is for; nothing was signed, nothing charged. Check the capability id, or do not buy from this seller`, {
        details: { capabilityId, challengeCapabilityId: challenge.capabilityId, amountMinor: challenge.amountMinor, currency: challenge.currency, providerId: challenge.providerId },
        body: { challenge },
      });
    }
    const ceiling = maxPriceMinor !== undefined ? ceilingOf(maxPriceMinor, 'maxPriceMinor')! : defaultCeiling;
    if (BigInt(challenge.amountMinor) > ceiling) {
      const isDefault = maxPriceMinor === undefined && ceilingIsDefault;
      const limit = isDefault ? `the default limit of ${ceiling} (no maxPriceMinor was set)` : `this buyer's limit of ${ceiling}`;
      throw new AgentpayError('PRICE_ABOVE_CLIENT_LIMIT', `the price ${challenge.amountMinor} ${challenge.currency} minor units is above ${limit}; nothing was signed. Raise maxPriceMinor (e.g. maxPriceMinor: "${challenge.amountMinor}") or choose another capability`, {
        details: { amountMinor: challenge.amountMinor, currency: challenge.currency, maxPriceMinor: String(ceiling), defaultLimit: isDefault, capabilityId: challenge.capabilityId },
      });
    }
    if (!(Date.parse(challenge.expiresAt) > now())) {
      throw new AgentpayError('CHALLENGE_EXPIRED', `the seller's quote expired at ${challenge.expiresAt}; nothing was signed. Call again for a new one`, { details: { expiresAt: challenge.expiresAt } });
    }
  }

  return {
    walletId: opts.walletId,
    checkChallenge,
    platformKey,
    ...(opts.privateKeyPem !== undefined && !opts.signer ? { signWithWalletKey: (unsigned: Record<string, unknown>) => signObject(opts.privateKeyPem!, unsigned) } : {}),

    async verifiedChallenge(answer) {
      const b = answer as { error?: { code?: unknown }; challenge?: unknown } | null | undefined;
      if (!b || typeof b !== 'object' || (b.error?.code !== 'PAYMENT_REQUIRED' && b.challenge === undefined)) return null;
      const c = b.challenge;
      if (!isPriceChallenge(c)) throw new AgentpayError('INVALID_CHALLENGE', 'the seller asked for payment without a well-formed price challenge; nothing was signed', { status: 402, body: { challenge: c } });
      const pem = await platformKey(c.signingKeyId);
      if (!pem || !(await verifyObject(pem, c as unknown as Record<string, unknown>))) {
        throw new AgentpayError('INVALID_CHALLENGE', `the price challenge is not signed by this gateway's platform key ${c.signingKeyId}; nothing was signed`, { status: 402, body: { challenge: c } });
      }
      return c;
    },

    async signProof(challenge, { maxPriceMinor, signal, capabilityId } = {}) {
      checkChallenge(challenge, { maxPriceMinor, capabilityId });
      if (signal?.aborted) throw cancelled();
      const unsigned: UnsignedPaymentProof = { version: 1, challenge, walletId: opts.walletId, signedAt: new Date(now()).toISOString() };
      const proof: PaymentProof = { ...unsigned, signature: await sign(unsigned) };
      if (signal?.aborted) throw cancelled(); // last moment: nothing has left this process yet
      return proof;
    },

    async verifiedReceipt(r, bytes, challenge) {
      if (r === null || r === undefined) return null;
      const bad = (why: string) => new AgentpayError('INVALID_RECEIPT', `the seller's receipt ${why}`, { body: { receipt: r } });
      if (!isReceipt(r)) throw bad('is not a receipt');
      const pem = await platformKey(r.signingKeyId);
      if (!pem || !(await verifyObject(pem, r as unknown as Record<string, unknown>))) throw bad(`is not signed by the platform key ${r.signingKeyId}`);
      if (r.consumerId !== opts.walletId || r.capabilityId !== challenge.capabilityId || r.providerId !== challenge.providerId) throw bad('is for another wallet, capability or seller');
      if (r.amount.currency !== challenge.currency) throw bad('names another amount than the challenge paid');
      if (r.amount.amountMinor !== challenge.amountMinor && !meteredWithin(r, challenge)) throw bad('names another amount than the challenge paid');
      if (bytes !== null && r.responseHash !== null && r.responseHash !== undefined && r.responseHash !== (await responseHash(bytes))) throw bad('does not cover the bytes received (responseHash mismatch)');
      if (r.status === 'success' && !r.responseHash) throw bad('of a successful call has no responseHash');
      return r;
    },

    async withApproval(attempt, wait, signal) {
      let held: AgentpayError;
      try {
        return await attempt();
      } catch (e) {
        if (!(e instanceof AgentpayError) || e.code !== 'APPROVAL_REQUIRED') throw e;
        held = e;
      }
      const approvalId = String(held.body.approvalId ?? held.details.approvalId ?? '');
      if (!approvalId) throw held;
      wait.onPending?.(approvalId);
      const approval = await decisionOn(approvalId, held, wait, wait.signal ?? signal);
      if (approval.status === 'denied') {
        // how long the denial stands is the gateway's to say (the approval's standsUntil), not ours
        const until = approval.standsUntil ? `; the denial stands until ${approval.standsUntil}` : '';
        throw new AgentpayError('APPROVAL_DENIED', `a person denied this purchase (approval ${approvalId}${approval.resolvedBy ? `, by ${approval.resolvedBy}` : ''}); nothing was charged${until}. Do not retry`, {
          details: { approvalId, ...(approval.resolvedBy ? { resolvedBy: approval.resolvedBy } : {}), ...(approval.standsUntil ? { standsUntil: approval.standsUntil } : {}) },
          body: { approval },
        });
      }
      return attempt(); // approved: the one retry it covers
    },
  };
}
