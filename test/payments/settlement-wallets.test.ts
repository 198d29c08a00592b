import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/domain/tenancy/api-keys.js';
import { PaymentService, allowAll } from '../../src/domain/payments/service.js';
import { SettlementWallets } from '../../src/domain/payments/settlement-wallets.js';
import type { ReadOptions, Repos, Store } from '../../src/store/store.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { createCapability, expectLedgerConsistent, ledgerBalance, newBuyer, signProof } from './helpers.js';

describe('SettlementWallets', () => {
  it('remembers a provider\'s settlement wallet once read, and forgets the oldest past its bound', () => {
    const known = new SettlementWallets(2);
    expect(known.of('prv_a')).toBeUndefined();
    known.remember('prv_a', 'wal_a');
    known.remember('prv_a', 'wal_other'); // fixed at the provider's creation: the first stays
    known.remember('prv_b', 'wal_b');
    expect([known.of('prv_a'), known.of('prv_b')]).toEqual(['wal_a', 'wal_b']);
    known.remember('prv_c', 'wal_c');
    expect([known.of('prv_a'), known.of('prv_b'), known.of('prv_c')]).toEqual([undefined, 'wal_b', 'wal_c']);
  });
});

describe('completing paid calls of one seller', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway();
  });
  afterAll(async () => {
    await t.close();
  });

  it('reads the seller\'s settlement wallet once per process, and credits it every sale', async () => {
    const s = await t.newProvider();
    const capabilityId = await createCapability(t, s.id, { priceMinor: '100' });
    const buyer = await newBuyer(t, t.workspace, '1000');
    const { ctx, signingKeys, config } = t.gw.services;
    // the gateway's store, counting the tenant reads of the service's transactions and reads
    const tenantReads: string[] = [];
    const counted = (r: Repos): Repos => ({
      ...r,
      tenants: { ...r.tenants, get: (id: string) => { tenantReads.push(id); return r.tenants.get(id); } } as Repos['tenants'],
    });
    const store: Store = Object.assign(Object.create(ctx.store) as Store, {
      tx: <T>(fn: (r: Repos) => Promise<T>) => ctx.store.tx((r) => fn(counted(r))),
      read: <T>(fn: (r: Repos) => Promise<T>, opts?: ReadOptions) => ctx.store.read((r) => fn(counted(r)), opts),
    });
    const service = new PaymentService({ ctx: { ...ctx, store }, signingKeys, settings: config, policy: allowAll });
    const principal: Principal = { keyId: 'key_test', tenantId: s.id, tenantKind: 'provider', scopes: new Set(['payments:write']) };

    const sellerBefore = ledgerBalance(t, s.walletId).balance;
    for (let i = 0; i < 3; i++) {
      const proof = signProof(await s.client.payments.challenge(capabilityId), buyer);
      const auth = await service.authorize(principal, { capabilityId, payment: proof });
      if (!('transactionId' in auth)) throw new Error('expected an authorization');
      tenantReads.length = 0;
      await service.complete(principal, { transactionId: auth.transactionId, responseHash: `sha256:${'0'.repeat(64)}` });
      // the first complete reads the seller; the later ones remember its settlement wallet
      expect(tenantReads).toEqual(i === 0 ? [s.id] : []);
    }
    // 3 sales of 100 less the 3% fee
    expect(ledgerBalance(t, s.walletId).balance - sellerBefore).toBe(291n);
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 700n, held: 0n });
    expectLedgerConsistent(t);
  });
});
