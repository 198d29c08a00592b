/**
 * The REST buyer's per-call `capabilityId`: the capability the caller meant to buy (e.g. the
 * id found through discovery). A seller at that URL quoting another capability is refused
 * with CHALLENGE_MISMATCH before anything is signed or sent: its handler does not run and
 * no money moves. Real HTTPS gateway, a node:http seller on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuyer } from '../../packages/sdk/src/buyer/index.js';
import { AgentpayError } from '../../packages/sdk/src/errors.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectLedgerConsistent, fundedAgent, publish, startNodeSeller, type AgentWallet, type RunningSeller } from './helpers.js';

let t: TestGateway;
let seller: RunningSeller;
let sold: string;
let meant: string;

beforeAll(async () => {
  t = await startTestGateway();
  sold = await publish(t, '100', 'Forecast sold at that URL');
  meant = await publish(t, '5', 'Forecast the buyer meant');
  seller = await startNodeSeller(t, sold, { onError: () => {} });
});
afterAll(async () => {
  await seller?.close();
  await t?.close();
});

const buyerFor = (a: AgentWallet) => createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem });
const refusal = (p: Promise<unknown>) => p.then(() => expect.unreachable('the purchase should have been refused'), (e: unknown) => e as AgentpayError);

describe('buyer.fetch / buyer.buy with capabilityId', () => {
  it('refuses a challenge for another capability with CHALLENGE_MISMATCH: no proof sent, handler not run, no money moved', async () => {
    const a = await fundedAgent(t, '1000');
    const [handled, payments] = [{ ...seller.log.handled }, seller.log.paymentsReceived];
    const buyer = buyerFor(a);

    const viaFetch = await refusal(buyer.fetch(`${seller.url}/forecast`, { capabilityId: meant }));
    const viaBuy = await refusal(buyer.buy(`${seller.url}/forecast`, { capabilityId: meant }));

    for (const e of [viaFetch, viaBuy]) {
      expect(e).toBeInstanceOf(AgentpayError);
      expect(e).toMatchObject({ code: 'CHALLENGE_MISMATCH', details: { capabilityId: meant, challengeCapabilityId: sold, amountMinor: '100' }, body: { challenge: { capabilityId: sold } } });
    }
    expect(seller.log.handled).toEqual(handled);
    expect(seller.log.paymentsReceived).toBe(payments);
    const balance = await t.workspace.wallets.balance(a.walletId);
    expect(balance).toMatchObject({ balanceMinor: '1000', availableMinor: '1000' });
    expect(await t.workspace.wallets.ledger(a.walletId)).toHaveLength(1); // the funding only
  });

  it('pays when the challenge is for the capability meant', async () => {
    const a = await fundedAgent(t, '1000');
    const { status, receipt } = await buyerFor(a).buy(`${seller.url}/forecast`, { capabilityId: sold });
    expect(status).toBe(200);
    expect(receipt).toMatchObject({ status: 'success', capabilityId: sold, amount: { amountMinor: '100' } });
    expect((await t.workspace.wallets.balance(a.walletId)).balanceMinor).toBe('900');
    await expectLedgerConsistent(t.workspace, a.walletId);
  });
});
