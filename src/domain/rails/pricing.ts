/**
 * USDC <-> USD arithmetic, in integers only. A price is micro-USD per USDC
 * (1_000_000 = 1.00 USD); USDC amounts are base units (6 decimals); USD amounts are
 * cents. Conversions round down, so the platform never credits or sends more than it
 * received or debited.
 */
import { validationError } from '../../core/errors.js';

export const PAR_MICROS = 1_000_000n;
/** USDC base units per USD cent at par (10^6 / 10^2) */
const UNITS_PER_CENT = 10_000n;
/** base units x micro-USD = 10^-12 USD; a cent is 10^-2 USD */
const SCALE = 10_000_000_000n;

/** within ±bandBps of 1 USD, edges included */
export function inBand(priceMicros: bigint, bandBps: number): boolean {
  const off = priceMicros > PAR_MICROS ? priceMicros - PAR_MICROS : PAR_MICROS - priceMicros;
  return off * 10_000n <= BigInt(bandBps) * PAR_MICROS;
}

/** what USDC base units are worth in USD cents at the price, rounded down */
export const usdcToUsdMinor = (units: bigint, priceMicros: bigint): bigint => (units * priceMicros) / SCALE;

/** how many USDC base units buy `cents` at the price, rounded down */
export const usdToUsdcUnits = (cents: bigint, priceMicros: bigint): bigint => (cents * SCALE) / priceMicros;

/** USD cents at par (1 USDC = 1 USD), rounded down */
export const usdcParMinor = (units: bigint): bigint => units / UNITS_PER_CENT;

const PRICE_RE = /^(0|[1-9][0-9]{0,5})(\.[0-9]{1,6})?$/;

/** "0.994" -> 994000n; at most 6 decimals, never through floating point */
export function parsePrice(value: string, field: string): bigint {
  if (!PRICE_RE.test(value)) throw validationError(field, `must be a decimal USD price with at most 6 decimals, e.g. "0.994"; got ${JSON.stringify(value)}`);
  const [whole, frac = ''] = value.split('.') as [string, string?];
  const micros = BigInt(whole) * PAR_MICROS + BigInt(frac.padEnd(6, '0'));
  if (micros === 0n) throw validationError(field, 'must be greater than zero');
  return micros;
}

/** 994000n -> "0.994" */
export function formatPrice(micros: bigint): string {
  const whole = micros / PAR_MICROS;
  const frac = (micros % PAR_MICROS).toString().padStart(6, '0').replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : `${whole}.0`;
}
