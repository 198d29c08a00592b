/**
 * Amounts are integer minor units. In memory they are `bigint`; on the wire and in
 * the CLI they are decimal strings. No floating point ever touches an amount.
 */
import { validationError } from './errors.js';

export type Minor = bigint;

const MINOR_RE = /^(0|[1-9][0-9]*)$/;
/** Large enough for any real balance, small enough for a signed 64-bit column. */
export const MAX_MINOR = 10n ** 15n;

/**
 * Parses an amount from the wire. Refuses JSON numbers (never rounded), signs,
 * decimals, exponents, leading zeros and anything above MAX_MINOR.
 */
export function parseMinor(value: unknown, field: string, opts: { allowZero?: boolean } = {}): Minor {
  if (typeof value === 'number') {
    throw validationError(field, `must be a string of integer minor units, e.g. "100"; got the JSON number ${String(value)}`);
  }
  if (typeof value !== 'string') {
    throw validationError(field, 'must be a string of integer minor units, e.g. "100"');
  }
  if (!MINOR_RE.test(value)) {
    const hint = value.includes('.') ? ' (amounts are integer minor units: "150" means 1.50)' : '';
    throw validationError(field, `must be a non-negative integer string${hint}; got ${JSON.stringify(value)}`);
  }
  const n = BigInt(value);
  if (n > MAX_MINOR) throw validationError(field, `must be at most ${MAX_MINOR}`);
  if (n === 0n && !opts.allowZero) throw validationError(field, 'must be greater than zero');
  return n;
}

export function formatMinor(n: Minor): string {
  return n.toString();
}

/** How many decimals each currency's minor unit has: USD cents, USDC base units. */
export const CURRENCY_DECIMALS: Readonly<Record<string, number>> = { USD: 2, USDC: 6 };

/**
 * An integer minor-unit string as an exact decimal with `decimals` places, by string
 * arithmetic only: ("10", 2) -> "0.10", ("-1500", 2) -> "-15.00", ("5000", 6) -> "0.005000".
 * Returns undefined for anything that is not an integer string.
 */
export function minorToDecimal(minor: string, decimals: number): string | undefined {
  const m = /^(-?)([0-9]+)$/.exec(minor);
  if (!m || !Number.isInteger(decimals) || decimals < 0) return undefined;
  const digits = m[2]!.replace(/^0+(?=.)/, '').padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const frac = digits.slice(digits.length - decimals);
  const sign = m[1] && /[1-9]/.test(digits) ? '-' : '';
  return `${sign}${whole}${decimals ? `.${frac}` : ''}`;
}

/** Fee in basis points, rounded down to the minor unit: feeFor(100n, 300) === 3n. */
export function feeFor(amount: Minor, feeBps: number): Minor {
  return (amount * BigInt(feeBps)) / 10_000n;
}

export const CURRENCIES = ['USD', 'USDC'] as const;
export type Currency = (typeof CURRENCIES)[number];
