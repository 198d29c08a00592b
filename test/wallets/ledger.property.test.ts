/**
 * Property: whatever sequence of funding, refused funding, freezing and unfreezing a
 * wallet goes through the real API (some funds fired concurrently), its balance is the
 * BigInt sum of its ledger's amounts, every running sum extends the previous one, seq is
 * gap-free, and refused requests leave no entry. Freezing blocks outgoing payments
 * only, so funding a frozen wallet succeeds.
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestGateway } from '../helpers/gateway.js';
import { call } from '../helpers/matrix.js';
import { expectConsistent, sumOf } from './ledger-checks.js';

const t = await startTestGateway();
afterAll(() => t.close());

const amount = fc.bigInt({ min: 1n, max: 10n ** 12n }).map(String);
type Op =
  | { kind: 'fund'; amount: string }
  | { kind: 'burst'; amounts: string[] }
  | { kind: 'badFund'; amountMinor: unknown }
  | { kind: 'foreignFund'; amount: string }
  | { kind: 'freeze' }
  | { kind: 'unfreeze' };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: amount.map((a) => ({ kind: 'fund' as const, amount: a })) },
  { weight: 1, arbitrary: fc.array(amount, { minLength: 2, maxLength: 5 }).map((amounts) => ({ kind: 'burst' as const, amounts })) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(0, 100, '0', '1.5', '-3', '1e3', null).map((amountMinor) => ({ kind: 'badFund' as const, amountMinor })) },
  { weight: 1, arbitrary: amount.map((a) => ({ kind: 'foreignFund' as const, amount: a })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'freeze' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'unfreeze' as const }) },
);

describe('a wallet under any sequence of fund, refused fund, freeze and unfreeze', () => {
  it('keeps balance = sum of ledger amounts, consistent running sums and gap-free seq', async () => {
    const stranger = await t.newWorkspace('Stranger');
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 12 }), async (ops) => {
        const { walletId } = await t.newAgentWallet(t.workspace, 'property-agent');
        const model = { balance: 0n, entries: 0, frozen: false };
        const fund = (body: unknown, apiKey = t.creds.workspace.apiKey) => call(t, 'POST', `/v1/wallets/${walletId}/fund`, { apiKey, body });

        for (const o of ops) {
          switch (o.kind) {
            case 'fund': {
              const res = await fund({ amountMinor: o.amount });
              expect(res.status).toBe(200);
              model.balance += BigInt(o.amount);
              model.entries += 1;
              break;
            }
            case 'burst': {
              const all = await Promise.all(o.amounts.map((a) => fund({ amountMinor: a })));
              expect(all.map((r) => r.status)).toEqual(o.amounts.map(() => 200));
              model.balance += o.amounts.reduce((s, a) => s + BigInt(a), 0n);
              model.entries += o.amounts.length;
              break;
            }
            case 'badFund': {
              const res = await fund({ amountMinor: o.amountMinor });
              expect(res.status).toBe(400);
              expect(res.body.error?.code).toBe('VALIDATION_FAILED');
              break;
            }
            case 'foreignFund': {
              const res = await fund({ amountMinor: o.amount }, stranger.apiKey);
              expect(res.status).toBe(404);
              break;
            }
            case 'freeze':
            case 'unfreeze': {
              const w = o.kind === 'freeze' ? await t.workspace.wallets.freeze(walletId) : await t.workspace.wallets.unfreeze(walletId);
              model.frozen = o.kind === 'freeze';
              expect(w.frozen).toBe(model.frozen);
              break;
            }
          }
          expect((await t.workspace.wallets.balance(walletId)).balanceMinor).toBe(model.balance.toString());
        }

        const entries = await t.workspace.wallets.ledger(walletId);
        expect(entries).toHaveLength(model.entries);
        expectConsistent(entries);
        expect(sumOf(entries)).toBe(model.balance);
        const w = await t.workspace.wallets.get(walletId);
        expect(w.balance).toEqual({ balanceMinor: model.balance.toString(), availableMinor: model.balance.toString(), currency: 'USD' });
        expect(w.frozen).toBe(model.frozen);
      }),
      { numRuns: 25 },
    );
  });
});
