import { periodOf, pledgeCalendars } from '../../src/pledges/pledge-calendar';

const REAL = { kind: 'real' } as const;
const JAKARTA = 'Asia/Jakarta';

/** The days a set of calendars fires on in one month of one year (hour and minute aside). */
function firingDays(day: number, year: number, month: number): number[] {
  const names = [
    'JANUARY',
    'FEBRUARY',
    'MARCH',
    'APRIL',
    'MAY',
    'JUNE',
    'JULY',
    'AUGUST',
    'SEPTEMBER',
    'OCTOBER',
    'NOVEMBER',
    'DECEMBER',
  ];
  const inRange = (value: unknown, x: number | string): boolean => {
    if (value === undefined || value === '*') return true;
    if (Array.isArray(value)) return value.some((v) => inRange(v, x));
    if (typeof value === 'object' && value !== null) {
      const { start, end, step } = value as { start: number; end?: number; step?: number };
      const last = end ?? start;
      if (typeof x !== 'number' || x < start || x > last) return false;
      return (x - start) % (step ?? 1) === 0;
    }
    return value === x;
  };
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return Array.from({ length: days }, (_, i) => i + 1).filter((d) =>
    pledgeCalendars('monthly', day, REAL).some(
      (spec) =>
        inRange(spec.year, year) &&
        inRange(spec.month, names[month - 1] ?? '') &&
        inRange(spec.dayOfMonth, d),
    ),
  );
}

describe('pledge calendar', () => {
  it('charges each month once, days past a short month’s end on its last day', () => {
    for (const year of [2026, 2027, 2028, 2100 - 4]) {
      for (let month = 1; month <= 12; month++) {
        const last = new Date(Date.UTC(year, month, 0)).getUTCDate();
        for (const day of [1, 15, 28, 29, 30, 31]) {
          expect({ year, month, day, fires: firingDays(day, year, month) }).toEqual({
            year,
            month,
            day,
            fires: [Math.min(day, last)],
          });
        }
      }
    }
  });

  it('names a moment’s period in the pledge’s time zone', () => {
    // 31 Dec 2026 18:00 UTC is already 1 January 2027 in Jakarta (UTC+7).
    const newYear = new Date('2026-12-31T18:00:00Z');
    expect(periodOf('monthly', newYear, JAKARTA, REAL)).toBe('2027-01');
    expect(periodOf('monthly', newYear, 'UTC', REAL)).toBe('2026-12');
    // ISO weeks: 1 January 2027 (a Friday) is in 2026's week 53.
    expect(periodOf('weekly', newYear, JAKARTA, REAL)).toBe('2026-W53');
    expect(periodOf('weekly', new Date('2027-01-04T01:00:00Z'), JAKARTA, REAL)).toBe('2027-W01');
  });

  it('gives every action of one period the same name, and the next period another', () => {
    const calendar = { kind: 'compressed', seconds: 10 } as const;
    const at = (iso: string) => periodOf('monthly', new Date(iso), JAKARTA, calendar);
    expect(at('2026-12-06T01:00:10.000Z')).toBe(at('2026-12-06T01:00:19.999Z'));
    expect(at('2026-12-06T01:00:20.000Z')).not.toBe(at('2026-12-06T01:00:19.999Z'));
    expect(at('2026-12-06T01:00:20.000Z')).toBe('2026-12-06T08:00:20');
  });

  it('fires on the weekday of a weekly pledge, at the charge hour', () => {
    expect(pledgeCalendars('weekly', 1, REAL)).toEqual([
      { hour: 8, minute: 0, second: 0, dayOfWeek: 'MONDAY' },
    ]);
    expect(pledgeCalendars('weekly', 7, REAL)[0]?.dayOfWeek).toBe('SUNDAY');
  });
});
