/**
 * The payment protocol's shape checks and header encoding live once, in the contract
 * (packages/sdk/src/contract/checks.ts, header.ts): the gateway's proof parser, the SDK's
 * isPriceChallenge/isReceipt and the CLI's receipt check all answer from them, each in its own words.
 */
import { describe, expect, it } from 'vitest';
import { Value } from '@sinclair/typebox/value';
import { challengeProblem, decodeHeader, encodeHeader, PaymentProof, proofProblem, readHeader, receiptProblems } from 'agentpay-sdk/contract';
import { isPriceChallenge, isReceipt } from 'agentpay-sdk/protocol';
import { parsePaymentProof } from '../../src/domain/payments/proof.js';
import { receiptShapeProblems } from '../../src/cli/receipts-verify.js';
import { AppError } from '../../src/core/errors.js';

const SIG = `${'A'.repeat(86)}==`;
const challenge = {
  capabilityId: 'cap_1', providerId: 'prv_1', amountMinor: '100', currency: 'USD', nonce: 'n1',
  expiresAt: '2026-11-21T10:05:00.000Z', payTo: 'wal_s', signature: SIG, signingKeyId: 'sk_1',
};
const proof = { version: 1, challenge, walletId: 'wal_b', signedAt: '2026-11-21T10:00:00.000Z', signature: SIG };
const receipt = {
  id: 'rcp_1', transactionId: 'txn_1', providerId: 'prv_1', consumerId: 'wal_b', capabilityId: 'cap_1',
  amount: { amountMinor: '100', currency: 'USD' }, responseHash: `sha256:${'0'.repeat(64)}`, status: 'success',
  timestamp: '2026-11-21T10:00:01.000Z', signature: SIG, signingKeyId: 'sk_1',
};

const gatewayRefusal = (payment: unknown) => {
  try {
    parsePaymentProof(payment);
  } catch (e) {
    return { message: (e as AppError).message, code: (e as AppError).code };
  }
  return undefined;
};

describe('the header encoding', () => {
  it('round-trips an object and names why a value is refused', () => {
    expect(decodeHeader(encodeHeader(proof))).toEqual(proof);
    expect(readHeader('not base64!')).toEqual({ ok: false, problem: 'not-base64url' });
    expect(readHeader(encodeHeader([1, 2]))).toEqual({ ok: false, problem: 'not-object' });
    expect(readHeader(Buffer.from('{"a":').toString('base64url'))).toEqual({ ok: false, problem: 'not-json' });
    expect(readHeader(encodeHeader(proof), { maxLength: 10 })).toEqual({ ok: false, problem: 'too-long' });
  });

  it('is what the gateway reads x-payment with', () => {
    expect(parsePaymentProof(encodeHeader(proof)).proof).toEqual(proof);
    expect(gatewayRefusal('x'.repeat(20_000))?.message).toMatch(/^payment: must be a payment proof object or the x-payment header value \(base64url/);
    expect(gatewayRefusal(Buffer.from('{"a":').toString('base64url'))?.message).toBe('payment: is not base64url of a JSON payment proof');
    expect(gatewayRefusal(encodeHeader([1]))?.message).toBe('payment: must be a payment proof object or the x-payment header value');
  });
});

describe('one challenge and proof check', () => {
  it('passes a well-formed proof and names the first field at fault', () => {
    expect(proofProblem(proof)).toBeUndefined();
    expect(challengeProblem(challenge)).toBeUndefined();
    expect(proofProblem({ ...proof, version: 2 })).toMatchObject({ field: 'payment.version', reason: 'must be 1' });
    expect(proofProblem({ ...proof, challenge: { ...challenge, nonce: '' } })?.field).toBe('payment.challenge.nonce');
    expect(challengeProblem({ ...challenge, expiresAt: '2026-02-30T00:00:00Z' })?.field).toBe('challenge.expiresAt');
    expect(challengeProblem({ ...challenge, currency: 'EUR' }, 'challenge', { currencies: ['USD', 'USDC'] })?.reason).toBe('must be one of USD, USDC');
  });

  it('decides for the gateway and the SDK alike, each answering in its own words', () => {
    const bad = [{ ...challenge, amountMinor: '1.5' }, { ...challenge, signature: 'short' }, { ...challenge, payTo: undefined }, 'not an object'];
    for (const c of bad) {
      expect(isPriceChallenge(c)).toBe(false);
      expect(gatewayRefusal({ ...proof, challenge: c })?.code).toBe('VALIDATION_FAILED');
    }
    expect(isPriceChallenge(challenge)).toBe(true);
    // the gateway words an amount as every amount of the API
    expect(gatewayRefusal({ ...proof, challenge: { ...challenge, amountMinor: '1.5' } })?.message).toMatch(/integer minor units: "150" means 1.50/);
  });
});

describe('one receipt check', () => {
  it('lists every field at fault; the CLI shows them as RECEIPT_MALFORMED, the SDK as not a receipt', () => {
    expect(receiptProblems(receipt)).toEqual([]);
    expect(isReceipt(receipt)).toBe(true);
    const broken = { ...receipt, status: 'ok', signingKeyId: '' };
    expect(receiptProblems(broken).map((p) => p.field)).toEqual(['status', 'signingKeyId']);
    expect(isReceipt(broken)).toBe(false);
    expect(receiptShapeProblems(broken)).toEqual([
      { code: 'RECEIPT_MALFORMED', field: 'status', message: 'status: must be "success" or "failed"' },
      { code: 'RECEIPT_MALFORMED', field: 'signingKeyId', message: 'signingKeyId: must name the receipt key, e.g. "sk_…"' },
    ]);
  });

  it('leaves a success receipt without a response hash to the payer, which refuses it with its own reason', () => {
    const noHash = { ...receipt, responseHash: null };
    expect(receiptProblems(noHash)).toMatchObject([{ field: 'responseHash', kind: 'success-without-response' }]);
    expect(isReceipt(noHash)).toBe(true);
    expect(receiptShapeProblems(noHash)).toHaveLength(1);
  });
});

describe('the shape checks and the TypeBox schemas agree', () => {
  // each string field of a proof and of its challenge, at its longest and one past it (and empty)
  const cases: Array<{ field: string; value: unknown }> = [];
  const fields = { challenge: ['capabilityId', 'providerId', 'payTo', 'signingKeyId', 'nonce'], proof: ['walletId'] } as const;
  const schemaMax = (where: 'challenge' | 'proof', f: string): number => {
    const props = where === 'proof' ? PaymentProof.properties : PaymentProof.properties.challenge.properties;
    return (props as Record<string, { maxLength?: number }>)[f]!.maxLength!;
  };
  for (const where of ['challenge', 'proof'] as const) {
    for (const f of fields[where]) {
      const max = schemaMax(where, f);
      for (const len of [0, 1, max, max + 1]) {
        const v = 'x'.repeat(len);
        cases.push({ field: `${where}.${f} (${len} characters)`, value: where === 'proof' ? { ...proof, [f]: v } : { ...proof, challenge: { ...challenge, [f]: v } } });
      }
    }
  }

  it('every length limit is the schema\'s (walletId was 100 in one and 200 in the other)', () => {
    expect(schemaMax('proof', 'walletId')).toBe(100);
    const disagree = cases.filter((c) => (proofProblem(c.value) === undefined) !== Value.Check(PaymentProof, c.value)).map((c) => c.field);
    expect(disagree).toEqual([]);
    // and the limits bite: one past the longest is refused by both
    expect(proofProblem({ ...proof, walletId: 'w'.repeat(101) })).toMatchObject({ field: 'payment.walletId' });
    expect(Value.Check(PaymentProof, { ...proof, walletId: 'w'.repeat(101) })).toBe(false);
  });

  it('a proof both accept is accepted by the gateway too', () => {
    expect(Value.Check(PaymentProof, proof)).toBe(true);
    expect(proofProblem(proof)).toBeUndefined();
    expect(gatewayRefusal(proof)).toBeUndefined();
  });
});
