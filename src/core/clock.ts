/** Time is injected so that tests move it instead of sleeping. */
export interface Clock {
  now(): number; // epoch milliseconds
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  constructor(private t: number = Date.UTC(2026, 0, 1)) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
  set(t: number): void {
    this.t = t;
  }
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

const ISO_PARTS = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:Z|[+-](\d{2}):(\d{2}))$/;

/**
 * An ISO 8601 time (`2030-01-31T00:00:00Z`, seconds and fraction optional, `Z` or an offset)
 * as epoch milliseconds, or undefined when it is malformed or names no real moment:
 * `Date.parse` rolls `2030-02-30` over to March 2 and `24:00` to the next day, so a
 * misstyped date would silently mean another one.
 */
export function parseIsoTime(text: string): number | undefined {
  const m = ISO_PARTS.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second = '0', offH = '0', offM = '0'] = m.slice(1) as (string | undefined)[];
  const y = Number(year), mo = Number(month), d = Number(day);
  const daysInMonth = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth) return undefined;
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59 || Number(offH) > 23 || Number(offM) > 59) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}
