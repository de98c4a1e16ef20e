import type { CalendarSpec, Month } from '@temporalio/client';
import type { PledgeCalendarConfig } from '../config/pledge-config';

/** How often a pledge charges. */
export type PledgeInterval = 'monthly' | 'weekly';

/**
 * The calendar pledges run on: the real one, or (tests and demos only) every period `seconds`
 * long, a minute's calendar spec firing each `seconds`, so a test sees periods pass without
 * sleeping through months (PLEDGE_CALENDAR, src/config/pledge-config.ts).
 */
export type PledgeCalendar = PledgeCalendarConfig;

/** When in the day a period's action fires, local time, and the spread that keeps the 1st calm. */
export const CHARGE_HOUR = 8;
export const CHARGE_JITTER = '3 hours';

const THIRTY_DAY_MONTHS: Month[] = ['APRIL', 'JUNE', 'SEPTEMBER', 'NOVEMBER'];
const LONG_MONTHS: Month[] = ['JANUARY', 'MARCH', 'MAY', 'JULY', 'AUGUST', 'OCTOBER', 'DECEMBER'];
// Leap years to the century's end (2100 is not one): a pledge's day past the 28th falls on
// February's last day, the 29th or the 28th.
const LEAP_YEARS = { start: 2024, end: 2096, step: 4 };
const COMMON_YEARS = [1, 2, 3].map((offset) => ({ start: 2024 + offset, end: 2099, step: 4 }));

/**
 * The schedule's calendars for a pledge charging on `day` of the period (1–31 of the month,
 * 1–7 Monday to Sunday of the week). Days 29–31 fall on the last day of shorter months: each
 * month has exactly one action.
 */
export function pledgeCalendars(
  interval: PledgeInterval,
  day: number,
  calendar: PledgeCalendar,
): CalendarSpec[] {
  if (calendar.kind === 'compressed') {
    return [{ second: { start: 0, end: 59, step: calendar.seconds }, minute: '*', hour: '*' }];
  }
  const at = { hour: CHARGE_HOUR, minute: 0, second: 0 };
  if (interval === 'weekly') {
    const days = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'];
    return [{ ...at, dayOfWeek: days[day - 1] as CalendarSpec['dayOfWeek'] }];
  }
  if (day <= 28) return [{ ...at, dayOfMonth: day }];
  const longer = day === 31 ? LONG_MONTHS : [...LONG_MONTHS, ...THIRTY_DAY_MONTHS];
  return [
    { ...at, month: longer, dayOfMonth: day, comment: `day ${day}` },
    ...(day === 31
      ? [{ ...at, month: THIRTY_DAY_MONTHS, dayOfMonth: 30, comment: 'last day' }]
      : []),
    { ...at, month: 'FEBRUARY', dayOfMonth: 29, year: LEAP_YEARS, comment: 'last day' },
    { ...at, month: 'FEBRUARY', dayOfMonth: 28, year: COMMON_YEARS, comment: 'last day' },
  ];
}

/** A moment's calendar fields in a time zone. */
function localParts(at: Date, timeZone: string) {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(at);
  const get = (type: string) => Number(parts.find((part) => part.type === type)?.value);
  return {
    year: get('year'),
    month: get('month'),
    day: get('day'),
    hour: get('hour'),
    minute: get('minute'),
    second: get('second'),
  };
}

const pad = (value: number, width = 2) => String(value).padStart(width, '0');

/**
 * The period a moment falls in, in the pledge's time zone: `2026-12` for a month, `2026-W49`
 * for an ISO week, the period's first second for a compressed calendar. Every action of one
 * period, scheduled, repeated or triggered by hand, names the same period, and so the same
 * donation.
 */
export function periodOf(
  interval: PledgeInterval,
  at: Date,
  timeZone: string,
  calendar: PledgeCalendar,
): string {
  const local = localParts(at, timeZone);
  if (calendar.kind === 'compressed') {
    const second = local.second - (local.second % calendar.seconds);
    return `${local.year}-${pad(local.month)}-${pad(local.day)}T${pad(local.hour)}:${pad(local.minute)}:${pad(second)}`;
  }
  if (interval === 'monthly') return `${local.year}-${pad(local.month)}`;
  // ISO 8601 week: the week of the Thursday in it.
  const date = new Date(Date.UTC(local.year, local.month - 1, local.day));
  const weekday = date.getUTCDay() === 0 ? 7 : date.getUTCDay();
  date.setUTCDate(date.getUTCDate() + 4 - weekday);
  const yearStart = Date.UTC(date.getUTCFullYear(), 0, 1);
  const week = Math.ceil(((date.getTime() - yearStart) / 86_400_000 + 1) / 7);
  return `${date.getUTCFullYear()}-W${pad(week)}`;
}
