import { loadConfig } from '../../src/config/config';
import { problemsOf } from '../support/config-problems';
import { productionEnv } from '../support/production-env';

const DAY = 86_400_000;

describe('pledge configuration', () => {
  it('retries a failed period after 1, 3 and 7 days by default', () => {
    const { pledges } = loadConfig({});
    expect(pledges.retryDelaysMs).toEqual([DAY, 3 * DAY, 7 * DAY]);
    expect(pledges.calendar).toEqual({ kind: 'real' });
    expect(pledges.timeZone).toBe('Asia/Jakarta');
  });

  it('takes other delays in s, m, h or d, or none', () => {
    expect(loadConfig({ PLEDGE_RETRY_DELAYS: '2s, 1m,3h' }).pledges.retryDelaysMs).toEqual([
      2_000,
      60_000,
      3 * 3_600_000,
    ]);
    expect(loadConfig({ PLEDGE_RETRY_DELAYS: 'none' }).pledges.retryDelaysMs).toEqual([]);
  });

  it('refuses delays it cannot read, more than nine, and minutes in production', () => {
    for (const raw of ['1 day', '0d', '1d,,2d', '1w', Array(10).fill('1d').join(',')]) {
      expect(problemsOf({ PLEDGE_RETRY_DELAYS: raw })).toEqual([
        expect.stringContaining('PLEDGE_RETRY_DELAYS'),
      ]);
    }
    expect(problemsOf(productionEnv({ PLEDGE_RETRY_DELAYS: '30m,1d' }))).toEqual([
      expect.stringContaining('PLEDGE_RETRY_DELAYS under an hour'),
    ]);
    expect(problemsOf(productionEnv({ PLEDGE_RETRY_DELAYS: '1h,1d' }))).toEqual([]);
  });
});
