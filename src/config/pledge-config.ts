import type { EnvReader } from './env-reader';
import { isTimeZone } from './time-zone';

/** The calendar pledges run on (src/pledges/pledge-calendar.ts mirrors it). */
export type PledgeCalendarConfig = { kind: 'real' } | { kind: 'compressed'; seconds: number };

export interface PledgeConfig {
  /** `real`, or a period of `seconds` for tests and demos (PLEDGE_CALENDAR=seconds:<n>). */
  readonly calendar: PledgeCalendarConfig;
  /** A pledge's time zone when its request names none. */
  readonly timeZone: string;
}

/**
 * PLEDGE_CALENDAR (`real`; `seconds:<n>` with n dividing 60, outside production only) and
 * PLEDGE_TIME_ZONE (Asia/Jakarta).
 */
export function readPledges(
  reader: EnvReader,
  problems: string[],
  production: boolean,
): PledgeConfig {
  const raw = reader.string('PLEDGE_CALENDAR', 'real');
  let calendar: PledgeCalendarConfig = { kind: 'real' };
  const compressed = /^seconds:(\d+)$/.exec(raw);
  if (compressed) {
    const seconds = Number(compressed[1]);
    if (production) problems.push('PLEDGE_CALENDAR=seconds:<n> is for tests and demos only');
    else if (seconds < 1 || 60 % seconds !== 0) {
      problems.push(`PLEDGE_CALENDAR seconds must divide 60, got ${seconds}`);
    } else calendar = { kind: 'compressed', seconds };
  } else if (raw !== 'real') {
    problems.push(`PLEDGE_CALENDAR must be "real" or "seconds:<n>", got "${raw}"`);
  }
  const timeZone = reader.string('PLEDGE_TIME_ZONE', 'Asia/Jakarta');
  if (!isTimeZone(timeZone)) {
    problems.push(`PLEDGE_TIME_ZONE must be an IANA time zone, got "${timeZone}"`);
  }
  return { calendar, timeZone };
}
