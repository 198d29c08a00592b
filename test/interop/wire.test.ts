/**
 * The interop codecs (packages/sdk/src/interop/wire.ts) against the published packages'
 * own encoders and parsers: what we write, @x402/core and mppx read, and the reverse.
 */
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { isPaymentRequired } from '@x402/core/schemas';
import { Challenge, Credential, Receipt as MppReceipt } from 'mppx';
import { describe, expect, it } from 'vitest';
import {
  decodePaymentCredential, decodeX402Header, encodePaymentCredential, encodeX402Header, paymentChallengeHeader, paymentReceiptHeader,
  parsePaymentChallenges, problemDetails, readPaymentCredential, x402PaymentRequired, x402SettlementResponse,
} from '../../packages/sdk/src/interop/wire.js';
import { encodeHeader, type PriceChallenge, type Receipt } from '../../packages/sdk/src/protocol.js';

const challenge: PriceChallenge = {
  capabilityId: 'cap_1', providerId: 'prv_1', amountMinor: '100', currency: 'USD', nonce: 'bm9uY2Utbm9uY2Utbm9uY2Utbm9uY2Utbm9uY2U',
  expiresAt: new Date(Date.now() + 60_000).toISOString(), payTo: 'wal_seller', signature: 'c2ln'.repeat(22), signingKeyId: 'key_1',
};
const receipt = {
  id: 'rcp_1', transactionId: 'txn_1', providerId: 'prv_1', consumerId: 'wal_buyer', capabilityId: 'cap_1', amount: { amountMinor: '100', currency: 'USD' },
  responseHash: 'sha256:00', status: 'success', timestamp: new Date().toISOString(), signature: 'x', signingKeyId: 'key_1',
} as unknown as Receipt;
const proof = { version: 1, challenge, walletId: 'wal_buyer', signedAt: new Date().toISOString(), signature: 'p' };

describe('x402 headers', () => {
  it('are standard base64 with padding, read by @x402/core (which refuses base64url)', () => {
    const pr = x402PaymentRequired(challenge, { resourceUrl: 'https://seller.example/x?q=1' });
    const header = encodeX402Header(pr);
    expect(header).toMatch(/^[A-Za-z0-9+/]*={0,2}$/);
    const decoded = decodePaymentRequiredHeader(header);
    expect(isPaymentRequired(decoded)).toBe(true);
    expect(decoded.accepts[0]).toMatchObject({ scheme: 'agentpay', network: 'agentpay:sandbox', amount: '100', asset: 'USD', payTo: 'wal_seller', extra: { challenge } });
    expect(decodePaymentResponseHeader(encodeX402Header(x402SettlementResponse(receipt)))).toMatchObject({ success: true, transaction: 'txn_1', extra: { receipt } });
  });

  it('reads a PAYMENT-SIGNATURE written by @x402/core as our proof, with its payment-identifier', () => {
    const sig = encodePaymentSignatureHeader({
      x402Version: 2, accepted: x402PaymentRequired(challenge, { resourceUrl: 'https://s.example/' }).accepts[0]! as never, payload: { proof },
      extensions: { 'payment-identifier': { info: { required: false, id: 'pay_0123456789abcdef' } } },
    });
    expect(decodeX402Header(sig)).toMatchObject({ payload: { proof } });
    const read = readPaymentCredential((n) => (n === 'payment-signature' ? sig : n === 'idempotency-key' ? 'other' : undefined));
    expect(read).toEqual({ kind: 'payment', dialect: 'x402', payment: proof, idempotencyKey: 'pay_0123456789abcdef' });
  });

  it('takes a payment-identifier id as the idempotency key only if it is one the extension declares (16-128 of A-Za-z0-9_-); else the Idempotency-Key header', () => {
    const declared = x402PaymentRequired(challenge, { resourceUrl: 'https://s.example/' }).extensions!['payment-identifier'] as { schema: { properties: { id: { pattern: string; minLength: number; maxLength: number } } } };
    expect(declared.schema.properties.id).toMatchObject({ pattern: '^[a-zA-Z0-9_-]+$', minLength: 16, maxLength: 128 });
    for (const [id, key] of [['short', 'header-key'], ['pay_0123456789abcdef!', 'header-key'], ['x'.repeat(129), 'header-key'], ['x'.repeat(128), 'x'.repeat(128)]] as const) {
      const sig = encodePaymentSignatureHeader({
        x402Version: 2, accepted: x402PaymentRequired(challenge, { resourceUrl: 'https://s.example/' }).accepts[0]! as never, payload: { proof },
        extensions: { 'payment-identifier': { info: { required: false, id } } },
      });
      const read = readPaymentCredential((n) => (n === 'payment-signature' ? sig : n === 'idempotency-key' ? 'header-key' : undefined));
      expect(read).toMatchObject({ kind: 'payment', idempotencyKey: key });
    }
  });
});

describe('the Payment scheme', () => {
  it('WWW-Authenticate is parsed by mppx and by us; the request is JCS base64url', () => {
    const h = paymentChallengeHeader(challenge, 'seller.example');
    const ch = Challenge.deserialize(h);
    expect(ch).toMatchObject({ id: challenge.nonce, realm: 'seller.example', method: 'agentpay', intent: 'charge', expires: challenge.expiresAt });
    expect(ch.request).toEqual({ amount: '100', currency: 'usd', recipient: 'wal_seller', methodDetails: { challenge } });
    const ours = parsePaymentChallenges(`Bearer realm="x", ${h}`);
    expect(ours).toHaveLength(1);
    expect(ours[0]).toMatchObject({ id: challenge.nonce, method: 'agentpay', intent: 'charge' });
    expect(Challenge.serialize(ch)).toBeTruthy();
  });

  it('a credential we encode is read by mppx, and one mppx encodes is read by us', () => {
    const ch = Challenge.deserialize(paymentChallengeHeader(challenge, 'seller.example'));
    const ours = encodePaymentCredential({ challenge: ch as never, payload: { proof }, source: 'wal_buyer' });
    expect(Credential.deserialize(ours)).toMatchObject({ payload: { proof }, source: 'wal_buyer', challenge: { id: challenge.nonce } });
    const theirs = Credential.serialize({ challenge: ch, payload: { proof }, source: 'wal_buyer' });
    expect(decodePaymentCredential(theirs)).toMatchObject({ payload: { proof } });
    expect(readPaymentCredential((n) => (n === 'authorization' ? theirs : n === 'idempotency-key' ? 'idem-1' : undefined)))
      .toEqual({ kind: 'payment', dialect: 'payment', payment: proof, challengeId: challenge.nonce, idempotencyKey: 'idem-1' });
  });

  it('refuses a garbage credential (malformed), another method (unsupported) and an id that is not the signed nonce', () => {
    expect(readPaymentCredential((n) => (n === 'authorization' ? 'Payment dGhpcyBpcyBnYXJiYWdl' : undefined))).toMatchObject({ kind: 'invalid', problem: 'malformed-credential', status: 402 });
    const ch = Challenge.deserialize(paymentChallengeHeader(challenge, 'seller.example'));
    const tempo = Credential.serialize({ challenge: { ...ch, method: 'tempo' }, payload: { proof } });
    expect(readPaymentCredential((n) => (n === 'authorization' ? tempo : undefined))).toMatchObject({ kind: 'invalid', problem: 'method-unsupported', status: 400 });
    const swapped = Credential.serialize({ challenge: { ...ch, id: 'another' }, payload: { proof } });
    expect(readPaymentCredential((n) => (n === 'authorization' ? swapped : undefined))).toMatchObject({ kind: 'invalid', problem: 'invalid-challenge', status: 402 });
    expect(readPaymentCredential((n) => (n === 'authorization' ? 'Bearer abc' : undefined))).toEqual({ kind: 'none' });
  });

  it('x-payment wins over the other dialects; Payment-Receipt is read by mppx', () => {
    const xp = encodeHeader(proof);
    expect(readPaymentCredential((n) => (n === 'x-payment' ? xp : n === 'authorization' ? 'Payment zzz' : undefined))).toMatchObject({ kind: 'payment', dialect: 'agentpay', payment: xp });
    const r = MppReceipt.deserialize(paymentReceiptHeader(receipt, challenge.nonce));
    expect(r).toMatchObject({ status: 'success', method: 'agentpay', reference: 'txn_1', receipt });
  });

  it('problem details carry the Payment scheme type and our code', () => {
    expect(problemDetails(402, 'PAYMENT_REQUIRED', 'pay', { challenge })).toEqual({ type: 'https://paymentauth.org/problems/payment-required', title: 'Payment Required', status: 402, detail: 'pay', code: 'PAYMENT_REQUIRED', challenge });
    expect(problemDetails(409, 'REPLAY_DETECTED', 'used')).toMatchObject({ type: 'https://paymentauth.org/problems/invalid-challenge', status: 409 });
    expect(problemDetails(503, 'GATEWAY_UNAVAILABLE', 'down')).toMatchObject({ type: 'about:blank', title: 'Service Unavailable' });
  });
});
