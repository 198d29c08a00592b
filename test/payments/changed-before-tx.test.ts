/**
 * Authorization and completion read what they decide on inside their transaction (one path each,
 * docs/architecture.md "Money"). Here the state changes just before that transaction, as another
 * request or instance would change it while this one was on its way: the answer must follow what
 * the transaction then reads, with the ledger unchanged but for what that answer moved. Runs on
 * SQLite, and on PostgreSQL in the postgres project.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import type { Principal } from '../../src/domain/tenancy/api-keys.js';
import { PaymentService, allowAll } from '../../src/domain/payments/service.js';
import type { Repos, Store } from '../../src/store/store.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { createCapability, expectLedgerConsistent, ledgerBalance, ledgerRows, newBuyer, signProof, transactionRow } from './helpers.js';

describe('paid calls whose state changes just before their transaction', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway();
  });
  afterAll(async () => {
    await t.close();
  });

  /** The gateway's services over its store, `between` run once before the next transaction begins. */
  function serviceWith() {
    const { ctx, signingKeys, config } = t.gw.services;
    let between: (() => Promise<void>) | undefined;
    const store: Store = Object.assign(Object.create(ctx.store) as Store, {
      tx: async <T>(fn: (r: Repos) => Promise<T>) => {
        const hook = between;
        if (hook) {
          between = undefined;
          await hook();
        }
        return ctx.store.tx(fn);
      },
    });
    const service = new PaymentService({ ctx: { ...ctx, store }, signingKeys, settings: config, policy: allowAll });
    return { service, next: (fn: () => Promise<void>) => { between = fn; } };
  }

  async function setup(fundMinor: string) {
    const s = await t.newProvider();
    const capabilityId = await createCapability(t, s.id, { priceMinor: '100' });
    const buyer = await newBuyer(t, t.workspace, fundMinor);
    const principal: Principal = { keyId: 'key_test', tenantId: s.id, tenantKind: 'provider', scopes: new Set(['payments:write']) };
    const proof = async () => signProof(await s.client.payments.challenge(capabilityId), buyer);
    return { s, capabilityId, buyer, principal, proof };
  }

  it('answers a completion whose transaction was failed after its read with 409, and moves no money for it', async () => {
    const { s, capabilityId, buyer, principal, proof } = await setup('300');
    const { service, next } = serviceWith();
    const auth = await service.authorize(principal, { capabilityId, payment: await proof() });
    if (!('transactionId' in auth)) throw new Error('expected an authorization');
    const sellerBefore = ledgerBalance(t, s.walletId).balance;
    // read as authorized; failed (buyer refunded) before the completion's transaction
    next(async () => {
      await service.fail(principal, { transactionId: auth.transactionId, reason: 'provider_error' });
    });
    const e = await service.complete(principal, { transactionId: auth.transactionId, responseHash: `sha256:${'1'.repeat(64)}` }).then(() => undefined, (x: unknown) => x);
    expect(e).toBeInstanceOf(AppError);
    expect((e as AppError).code).toBe('CONFLICT');
    expect((e as AppError).details).toMatchObject({ transactionId: auth.transactionId, status: 'failed' });
    expect(transactionRow(t, auth.transactionId).status).toBe('failed');
    expect(ledgerRows(t, { transactionId: auth.transactionId }).map((x) => x.type)).toEqual(['hold', 'refund']);
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 300n, held: 0n });
    expect(ledgerBalance(t, s.walletId).balance).toBe(sellerBefore);
    expectLedgerConsistent(t);
  });

  it('answers a completion whose transaction was completed after its read with the same receipt, and moves the money once', async () => {
    const { s, capabilityId, buyer, principal, proof } = await setup('300');
    const { service, next } = serviceWith();
    const auth = await service.authorize(principal, { capabilityId, payment: await proof() });
    if (!('transactionId' in auth)) throw new Error('expected an authorization');
    const sellerBefore = ledgerBalance(t, s.walletId).balance;
    const input = { transactionId: auth.transactionId, responseHash: `sha256:${'2'.repeat(64)}` };
    let first: unknown;
    next(async () => {
      first = await service.complete(principal, input);
    });
    const second = await service.complete(principal, input);
    expect(second).toEqual(first);
    expect(ledgerRows(t, { transactionId: auth.transactionId }).map((x) => x.type)).toEqual(['hold', 'capture', 'sale', 'fee']);
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 200n, held: 0n });
    expect(ledgerBalance(t, s.walletId).balance - sellerBefore).toBe(97n);
    expectLedgerConsistent(t);
  });

  it('refuses an authorization whose wallet was spent after its reads with 402 INSUFFICIENT_FUNDS and the balance then, holding nothing more', async () => {
    const { capabilityId, buyer, principal, proof } = await setup('150');
    const { service, next } = serviceWith();
    const late = await proof();
    // the reads see 150 available; another purchase holds 100 before this one's transaction
    const other = await proof();
    next(async () => {
      await service.authorize(principal, { capabilityId, payment: other });
    });
    const e = await service.authorize(principal, { capabilityId, payment: late }).then(() => undefined, (x: unknown) => x);
    expect((e as AppError).code).toBe('INSUFFICIENT_FUNDS');
    expect((e as AppError).details).toMatchObject({ availableMinor: '50', amountMinor: '100' });
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 150n, held: 100n });
    expectLedgerConsistent(t);
  });

  it('answers a proof used by another authorization after the reads with 409 REPLAY_DETECTED, charging once', async () => {
    const { capabilityId, buyer, principal, proof } = await setup('500');
    const { service, next } = serviceWith();
    const payment = await proof();
    next(async () => {
      await service.authorize(principal, { capabilityId, payment });
    });
    const e = await service.authorize(principal, { capabilityId, payment }).then(() => undefined, (x: unknown) => x);
    expect((e as AppError).code).toBe('REPLAY_DETECTED');
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 500n, held: 100n });
    expectLedgerConsistent(t);
  });
});
