/** How a person reads what `agentpay demo` did: the purchases, receipts, money and balances. */
import { moneyText, renderTable } from '../output.js';
import type { DemoSummary, WalletMovement } from './run.js';

/** Signed minor units for a movement: -100, +97, 0. */
export function signed(amountMinor: string): string {
  return amountMinor.startsWith('-') || amountMinor === '0' ? amountMinor : `+${amountMinor}`;
}

const entriesText = (m: WalletMovement) => m.entries.map((e) => `${e.type} ${signed(e.amountMinor)}${e.holdMinor !== '0' ? ` (hold ${signed(e.holdMinor)})` : ''}`).join(', ');

export function demoReport(s: DemoSummary): string {
  const m = s.movement;
  const sections = [
    `Search "${s.search.query}": what the buyer agent found`,
    renderTable(s.search.results, [
      { header: 'CAPABILITY', get: (r) => r.capabilityId },
      { header: 'NAME', get: (r) => r.name },
      { header: 'PRICE', get: (r) => moneyText(r.priceMinor, s.currency) },
      { header: 'SCORE', get: (r) => r.score.toFixed(3) },
    ], '(nothing found)'),
    '',
    'Purchases',
    renderTable(s.purchases, [
      { header: 'CAPABILITY', get: (p) => p.name },
      { header: 'URL', get: (p) => p.url },
      { header: 'HTTP', get: (p) => p.status },
      { header: 'OUTCOME', get: (p) => (p.ok ? 'paid' : p.refunded ? 'failed, refunded' : 'failed') },
    ]),
    '',
    'Receipts (signed by the platform; the buyer checked each signature and response hash)',
    renderTable(s.receipts, [
      { header: 'RECEIPT', get: (r) => r.id },
      { header: 'STATUS', get: (r) => r.status },
      { header: 'AMOUNT', get: (r) => moneyText(r.amount.amountMinor, r.amount.currency) },
      { header: 'TRANSACTION', get: (r) => r.transactionId },
      { header: 'SIGNATURE', get: (r) => (r.signatureValid ? 'valid' : 'INVALID') },
    ]),
    '',
    `Ledger movement of one purchase (${m.transactionId}, ${m.currency} minor units)`,
    renderTable([
      { who: 'buyer', ...m.buyer },
      { who: 'seller', ...m.seller },
      { who: 'platform fee', ...m.platform },
    ], [
      { header: 'WALLET', get: (r) => `${r.who} ${r.walletId}` },
      { header: 'MOVEMENT', get: (r) => signed(r.amountMinor) },
      { header: 'ENTRIES', get: (r) => entriesText(r) },
    ]),
  ];
  if (s.refund) {
    sections.push(`The failed purchase (${s.refund.transactionId}): ${entriesText(s.refund.buyer)}; the buyer's net movement is ${signed(s.refund.buyer.amountMinor)}.`);
  }
  sections.push(
    '',
    `Balances (${s.currency} minor units)`,
    renderTable(Object.entries(s.balances), [
      { header: 'WALLET', get: ([who, b]) => `${who} ${b.walletId}` },
      { header: 'BEFORE', get: ([, b]) => b.beforeMinor },
      { header: 'AFTER', get: ([, b]) => b.afterMinor },
    ]),
    '',
    s.gateway.kept
      ? `Everything is stopped; the data is kept in ${s.gateway.dataDir}. Look around: agentpay dev --data-dir ${s.gateway.dataDir}, then agentpay receipts list --data-dir ${s.gateway.dataDir}`
      : 'Everything is stopped and the temp dir is removed. Next: npx agentpay dev starts a gateway of your own (docs/cli.md).',
  );
  return sections.join('\n');
}
