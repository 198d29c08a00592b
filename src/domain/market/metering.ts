/**
 * Metered prices (docs/protocol.md § Metered prices): a capability may charge per unit used (tokens,
 * rows, seconds) up to a maximum per call. The buyer authorizes the maximum, `unitPriceMinor` ×
 * `maxUnits`, which is the capability's `priceMinor`: every check on the buyer's side (budgets,
 * approvals, the SDK's price ceiling) reads the most one call can cost. At complete the seller
 * reports the units used; the call is charged units × unit price, never more than was authorized.
 * Amounts and counts are exact: decimal strings on the wire and in the store, bigints here.
 */
import { AppError, validationError } from '../../core/errors.js';
import { MAX_MINOR, parseMinor } from '../../core/money.js';
import { MAX_METERED_UNITS, type Metering } from 'agentpay-sdk/contract';

export type { Metering };

const UNIT = /^[a-z][a-z0-9_-]{0,31}$/;
const COUNT = /^(0|[1-9][0-9]*)$/;

/** A count of units from the wire: a non-negative integer string, at most MAX_METERED_UNITS. */
export function parseUnits(value: unknown, field: string, opts: { allowZero?: boolean } = {}): bigint {
  if (typeof value !== 'string' || !COUNT.test(value)) {
    throw validationError(field, `must be a count of units, a non-negative integer as a string, e.g. "1200"; got ${JSON.stringify(value)}`);
  }
  const n = BigInt(value);
  if (n > MAX_METERED_UNITS) throw validationError(field, `must be at most ${MAX_METERED_UNITS}`);
  if (n === 0n && !opts.allowZero) throw validationError(field, 'must be greater than zero');
  return n;
}

/** A metering object as a seller sends it, checked field by field (a refusal names `<field>.unit` and so on); normalized to canonical strings. */
export function parseMetering(value: unknown, field = 'metering'): Metering {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw validationError(field, 'must be an object {unit, unitPriceMinor, maxUnits}, e.g. {"unit": "token", "unitPriceMinor": "2", "maxUnits": "5000"}');
  }
  const v = value as Record<string, unknown>;
  const extra = Object.keys(v).filter((k) => k !== 'unit' && k !== 'unitPriceMinor' && k !== 'maxUnits');
  if (extra.length > 0) throw validationError(`${field}.${extra[0]}`, 'is not a field of metering; send unit, unitPriceMinor and maxUnits');
  if (typeof v.unit !== 'string' || !UNIT.test(v.unit)) {
    throw validationError(`${field}.unit`, 'must name what is counted: 1 to 32 lowercase letters, digits, "_" or "-", starting with a letter, e.g. "token"');
  }
  const unitPrice = parseMinor(v.unitPriceMinor, `${field}.unitPriceMinor`);
  const maxUnits = parseUnits(v.maxUnits, `${field}.maxUnits`);
  if (unitPrice * maxUnits > MAX_MINOR) {
    throw validationError(`${field}.maxUnits`, `makes the most one call can cost (unitPriceMinor × maxUnits = ${unitPrice * maxUnits}) more than ${MAX_MINOR}`);
  }
  return { unit: v.unit, unitPriceMinor: unitPrice.toString(), maxUnits: maxUnits.toString() };
}

/** The most one call can cost: unitPriceMinor × maxUnits, the amount the buyer authorizes. */
export function maximumOf(m: Metering): bigint {
  return BigInt(m.unitPriceMinor) * BigInt(m.maxUnits);
}

/** A metered capability's priceMinor must be its maximum: the field at fault is named. */
export function checkPriceIsMaximum(priceMinor: bigint, m: Metering, field = 'priceMinor'): void {
  const max = maximumOf(m);
  if (priceMinor !== max) {
    throw validationError(field, `must be ${max} for this metered price: a metered capability's priceMinor is the most one call can cost, metering.unitPriceMinor × metering.maxUnits (${m.unitPriceMinor} × ${m.maxUnits})`, { expected: max.toString() });
  }
}

/**
 * What a metered call is charged for `units`: units × unit price, refused above what the buyer
 * authorized (`authorizedMinor`, the hold) with USAGE_ABOVE_MAXIMUM; nothing is charged then.
 */
export function chargeFor(units: bigint, unitPriceMinor: bigint, authorizedMinor: bigint, transactionId: string): bigint {
  const charged = units * unitPriceMinor;
  if (charged > authorizedMinor) {
    const maxUnits = unitPriceMinor === 0n ? 0n : authorizedMinor / unitPriceMinor;
    throw new AppError('USAGE_ABOVE_MAXIMUM',
      `units: ${units} units at ${unitPriceMinor} each cost ${charged}, more than the ${authorizedMinor} the buyer authorized (at most ${maxUnits} units); nothing was charged: complete again with at most ${maxUnits} units, or fail the call`,
      { transactionId, field: 'units', units: units.toString(), unitPriceMinor: unitPriceMinor.toString(), chargedMinor: charged.toString(), authorizedMinor: authorizedMinor.toString(), maxUnits: maxUnits.toString() });
  }
  return charged;
}
