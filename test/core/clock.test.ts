import { describe, expect, it } from 'vitest';
import { parseIsoTime } from '../../src/core/clock.js';

describe('parseIsoTime', () => {
  it('reads ISO 8601 times with Z or an offset, seconds and fractions optional', () => {
    expect(parseIsoTime('2030-01-31T00:00:00Z')).toBe(Date.UTC(2030, 0, 31));
    expect(parseIsoTime('2030-01-31T00:00Z')).toBe(Date.UTC(2030, 0, 31));
    expect(parseIsoTime('2030-01-31T02:00:00.250+02:00')).toBe(Date.UTC(2030, 0, 31, 0, 0, 0, 250));
    expect(parseIsoTime('2028-02-29T00:00:00Z')).toBe(Date.UTC(2028, 1, 29)); // a leap day
  });

  it('refuses times that name no real moment instead of rolling them over', () => {
    for (const text of [
      '2030-02-29T00:00:00Z', // not a leap year
      '2030-02-30T00:00:00Z', '2030-04-31T00:00:00Z', '2030-00-10T00:00:00Z', '2030-13-01T00:00:00Z', '2030-01-00T00:00:00Z',
      '2030-01-01T24:00:00Z', '2030-01-01T23:60:00Z', '2030-01-01T23:59:60Z', '2030-01-01T00:00:00+24:00',
    ]) expect(parseIsoTime(text), text).toBeUndefined();
  });

  it('refuses what is not an ISO time: words, dates without a time or zone', () => {
    for (const text of ['tomorrow', '2030-01-31', '2030-01-31T00:00:00', '2030-1-31T00:00:00Z', '']) expect(parseIsoTime(text), text).toBeUndefined();
  });
});
