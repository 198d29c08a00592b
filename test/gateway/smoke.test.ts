import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway();
});
afterAll(async () => {
  await t.close();
});

describe('a sandbox gateway', () => {
  it('answers health over HTTPS with the current signing key id', async () => {
    const h = await t.client().platform.health();
    expect(h.status).toBe('ok');
    expect(h.instance).toMatch(/^sk_/);
  });

  it('funds an agent wallet and reports the balance from the ledger', async () => {
    const { walletId } = await t.newAgentWallet(t.workspace);
    await t.workspace.wallets.fund(walletId, '250');
    await t.workspace.wallets.fund(walletId, '50');
    expect(await t.workspace.wallets.balance(walletId)).toEqual({ balanceMinor: '300', availableMinor: '300', currency: 'USD' });
    const ledger = await t.workspace.wallets.ledger(walletId);
    expect(ledger.map((e) => e.amountMinor)).toEqual(['250', '50']);
  });
});
