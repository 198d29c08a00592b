/**
 * Amounts as the page shows them: exact, from the API's integer minor-unit strings, by
 * string and bigint arithmetic only (src/core/money.ts, the same code as the CLI's tables).
 */
import { CURRENCY_DECIMALS, minorToDecimal } from '../../src/core/money.js';

export function money(amountMinor: string | bigint, currency: string): string {
  const minor = typeof amountMinor === 'bigint' ? amountMinor.toString() : amountMinor;
  const decimals = CURRENCY_DECIMALS[currency];
  const decimal = decimals === undefined ? undefined : minorToDecimal(minor, decimals);
  return decimal === undefined ? `${minor} ${currency} minor units` : `${decimal} ${currency}`;
}

/** A short local date and time for a table cell; the ISO time stays in the title. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '-';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
}
