import type { EnvReader } from './env-reader';
import { isTimeZone } from './time-zone';

/** The calendar pledges run on (src/pledges/pledge-calendar.ts mirrors it). */
export type PledgeCalendarConfig = { kind: 'real' } | { kind: 'compressed'; seconds: number };

export interface PledgeConfig {
  /** `real`, or a period of `seconds` for tests and demos (PLEDGE_CALENDAR=seconds:<n>). */
  readonly calendar: PledgeCalendarConfig;
  /** A pledge's time zone when its request names none. */
  readonly timeZone: string;
  /** How long after each failed attempt of a period the next one is made (the dunning). */
  readonly retryDelaysMs: readonly number[];
}

const UNIT_MS: Readonly<Record<string, number>> = {
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** The shortest retry delay production takes: a donor's card is not tried every few minutes. */
const PRODUCTION_MIN_DELAY_MS = 3_600_000;

/**
 * PLEDGE_CALENDAR (`real`; `seconds:<n>` with n dividing 60, outside production only),
 * PLEDGE_TIME_ZONE (Asia/Jakarta) and PLEDGE_RETRY_DELAYS (`1d,3d,7d`: up to 9 durations in
 * s, m, h or d; an hour at least in production; `none` for no retries).
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
  return { calendar, timeZone, retryDelaysMs: readRetryDelays(reader, problems, production) };
}

function readRetryDelays(reader: EnvReader, problems: string[], production: boolean): number[] {
  const raw = reader.string('PLEDGE_RETRY_DELAYS', '1d,3d,7d').trim();
  if (raw === 'none') return [];
  const delays = raw.split(',').map((part) => {
    const match = /^(\d{1,4})([smhd])$/.exec(part.trim());
    return match ? Number(match[1]) * (UNIT_MS[match[2] ?? ''] ?? NaN) : NaN;
  });
  if (delays.some((ms) => !Number.isFinite(ms) || ms <= 0) || delays.length > 9) {
    problems.push(`PLEDGE_RETRY_DELAYS must be up to 9 durations like 1d,3d,7d, got "${raw}"`);
    return [];
  }
  if (production && delays.some((ms) => ms < PRODUCTION_MIN_DELAY_MS)) {
    problems.push('PLEDGE_RETRY_DELAYS under an hour are for tests and demos only');
  }
  return delays;
}
