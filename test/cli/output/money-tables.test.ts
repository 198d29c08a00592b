/**
 * How tables show money: exactly, in whole currency units by the currency's decimals
 * (USD 2, USDC 6), through the one shared moneyText, never as bare minor units labelled
 * with a currency ("10 USD" for ten cents). Plain functions, no gateway.
 */
import { describe, expect, it } from 'vitest';
import { minorToDecimal } from '../../../src/core/money.js';
import { approvalTable } from '../../../src/cli/approvals.js';
import { capabilityTable } from '../../../src/cli/capabilities.js';
import { moneyText } from '../../../src/cli/output.js';
import { payoutTable, transactionTable } from '../../../src/cli/rails.js';
import { receiptPageText } from '../../../src/cli/receipts.js';
import { searchTable } from '../../../src/cli/search.js';
import { ledgerTable } from '../../../src/cli/wallets.js';
import type { Payout, RailTransaction } from '../../../packages/sdk/src/client/index.js';
import type { Approval, Capability, LedgerEntry, Receipt } from '../../../packages/sdk/src/types.js';

/** the cells of row `i` of a rendered table (columns are separated by two spaces or more) */
const row = (table: string, i: number) => table.split('\n')[i]!.split(/\s{2,}/);
const column = (table: string, header: string) => row(table, 1)[row(table, 0).indexOf(header)];

const capability: Capability = {
  id: 'cap_1', providerId: 'prv_1', name: 'PDF', description: 'pdf tools', protocol: 'rest', priceMinor: '10', currency: 'USD',
  category: 'documents', tags: [], schema: null, latencyP50Ms: null, status: 'active', createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z',
} as Capability;

describe('minorToDecimal', () => {
  it('places the decimal point exactly by string arithmetic, keeping every digit', () => {
    expect(minorToDecimal('10', 2)).toBe('0.10');
    expect(minorToDecimal('0', 2)).toBe('0.00');
    expect(minorToDecimal('123456', 2)).toBe('1234.56');
    expect(minorToDecimal('5000', 6)).toBe('0.005000');
    expect(minorToDecimal('1000000000000001', 6)).toBe('1000000000.000001');
    expect(minorToDecimal('-1500', 2)).toBe('-15.00');
    expect(minorToDecimal('-0', 2)).toBe('0.00');
    expect(minorToDecimal('7', 0)).toBe('7');
  });

  it('refuses what is not an integer string', () => {
    expect(minorToDecimal('1.5', 2)).toBeUndefined();
    expect(minorToDecimal('', 2)).toBeUndefined();
    expect(minorToDecimal('1e3', 2)).toBeUndefined();
  });
});

describe('moneyText', () => {
  it('shows USD with 2 decimals and USDC with 6, naming the currency', () => {
    expect(moneyText('10', 'USD')).toBe('0.10 USD');
    expect(moneyText('100', 'USD')).toBe('1.00 USD');
    expect(moneyText('5000', 'USDC')).toBe('0.005000 USDC');
    expect(moneyText('-97', 'USD')).toBe('-0.97 USD');
  });

  it('falls back to minor units, saying so, for a currency whose decimals are unknown', () => {
    expect(moneyText('10', 'EUR')).toBe('10 EUR minor units');
    expect(moneyText('10', 'constructor')).toBe('10 constructor minor units');
  });
});

describe('every table with money shows it through moneyText', () => {
  it('search: a price of 10 USD minor units is 0.10 USD', () => {
    const table = searchTable([{
      capability, version: { endpoint: 'https://x', address: { kind: 'url', url: 'https://x' }, version: '1' },
      provider: { id: 'prv_1', name: 'Acme', verified: true, reputation: 1 }, score: 1,
      scoreBreakdown: { relevance: 1, price: 1, latency: 1, reputation: 1, verification: 1 },
    }]);
    expect(column(table, 'PRICE')).toBe('0.10 USD');
  });

  it('capabilities list', () => {
    const table = capabilityTable([{ capability, version: { id: 'cv_1', endpoint: 'https://x', address: { kind: 'url', url: 'https://x' }, version: '1', hash: 'sha256:x' } }]);
    expect(column(table, 'PRICE')).toBe('0.10 USD');
  });

  it('receipts list', () => {
    const receipt = {
      id: 'rcp_1', transactionId: 'txn_1', providerId: 'prv_1', consumerId: 'wal_1', capabilityId: 'cap_1', amount: { amountMinor: '100', currency: 'USD' },
      responseHash: null, status: 'success', timestamp: '2026-01-01T00:00:00.000Z', signature: 's', signingKeyId: 'sk_1',
    } as Receipt;
    expect(column(receiptPageText({ receipts: [receipt] }, undefined), 'AMOUNT')).toBe('1.00 USD');
  });

  it('rail transactions: the rail amount in its currency, the credited amount in USD', () => {
    const tx = {
      id: 'dep_1', kind: 'deposit', direction: 'in', walletId: 'wal_1', treasuryProviderId: 'sandbox-chain', rail: 'usdc_base', state: 'confirmed',
      railAmountMinor: '5000', railCurrency: 'USDC', usdAmountMinor: '0', creditedMinor: '0', usdcPrice: '1', externalRef: null, counterparty: null,
      reason: 'r', createdAt: 'c', updatedAt: 'u', settledAt: null,
    } as RailTransaction;
    const topUp = { ...tx, id: 'top_1', kind: 'topup', rail: 'ach', railAmountMinor: '5000', railCurrency: 'USD', creditedMinor: '5000' } as RailTransaction;
    const table = transactionTable([topUp, tx]);
    expect(column(table, 'ON RAIL')).toBe('50.00 USD');
    expect(column(table, 'CREDITED')).toBe('50.00 USD');
    expect(row(table, 2)).toContain('0.005000 USDC');
    expect(table).not.toMatch(/\b5000 USD\b/);
  });

  it('payouts, approvals and the wallet ledger', () => {
    const payout = { id: 'pay_1', status: 'submitted', amountMinor: '5000', currency: 'USD', rail: 'ach', destination: 'ext_1', createdAt: 'c' } as Payout;
    expect(column(payoutTable([payout]), 'AMOUNT')).toBe('50.00 USD');

    const approval = { id: 'apr_1', status: 'pending', agentId: 'a', walletId: 'w', capabilityId: 'cap_1', amountMinor: '250', currency: 'USD', rule: 'r', policyId: 'p', createdAt: 'c' } as Approval;
    const approvals = approvalTable([approval]);
    expect(column(approvals, 'AMOUNT')).toBe('2.50 USD');
    expect(row(approvals, 0)).not.toContain('CURRENCY');

    const entry = { id: 'led_1', walletId: 'w', seq: 1, type: 'capture', amountMinor: '-97', holdMinor: '0', balanceAfterMinor: '1003', heldAfterMinor: '0', currency: 'USD', transactionId: 't', reference: null, memo: 'm', createdAt: 'c' } as LedgerEntry;
    const ledger = ledgerTable([entry]);
    expect(column(ledger, 'AMOUNT')).toBe('-0.97 USD');
    expect(column(ledger, 'HOLD')).toBe('0.00 USD');
    expect(column(ledger, 'BALANCE AFTER')).toBe('10.03 USD');
  });
});
