import { PermanentBootError, waitUntilUp } from '../../src/resilience/wait-until-up';

/** A log that keeps its lines, and a clock the waits move. */
function harness() {
  const lines: { level: string; message: string; object: object }[] = [];
  let clock = 0;
  const pauses: number[] = [];
  return {
    lines,
    pauses,
    options: {
      log: {
        warn: (object: object, message: string) => lines.push({ level: 'warn', message, object }),
        info: (object: object, message: string) => lines.push({ level: 'info', message, object }),
      },
      now: () => clock,
      sleep: async (ms: number) => {
        pauses.push(ms);
        clock += ms;
      },
    },
  };
}

describe('waitUntilUp', () => {
  it('retries with growing, capped pauses and logs a long wait once a minute, then once more when up', async () => {
    const { lines, pauses, options } = harness();
    let attempts = 0;
    const result = await waitUntilUp(
      'Postgres',
      async () => {
        attempts++;
        if (attempts < 40) throw new Error('connect ECONNREFUSED');
        return 'up';
      },
      { ...options, isPermanent: () => false, initialDelayMs: 100, maxDelayMs: 5_000 },
    );
    expect(result).toBe('up');
    expect(attempts).toBe(40);
    expect(Math.max(...pauses)).toBeLessThanOrEqual(5_000);
    expect(pauses[0]).toBeLessThanOrEqual(100);
    const elapsed = pauses.reduce((total, pause) => total + pause, 0);
    const warnings = lines.filter((line) => line.level === 'warn');
    // The first failure, then at most one line per minute of waiting.
    expect(warnings.length).toBeLessThanOrEqual(1 + Math.floor(elapsed / 60_000));
    expect(warnings[0]).toMatchObject({
      message: 'waiting for Postgres',
      object: { reason: 'connect ECONNREFUSED' },
    });
    expect(lines.at(-1)).toMatchObject({ level: 'info', message: 'Postgres is up' });
  });

  it('says nothing when the first attempt succeeds', async () => {
    const { lines, options } = harness();
    await waitUntilUp('Temporal', async () => 'ok', { ...options, isPermanent: () => false });
    expect(lines).toEqual([]);
  });

  it('ends at once on a permanent failure, naming the dependency and the reason', async () => {
    const { pauses, options } = harness();
    const refused = new Error('certificate verify failed', { cause: new Error('UNKNOWN_CA') });
    await expect(
      waitUntilUp(
        'Temporal',
        async () => {
          throw refused;
        },
        { ...options, isPermanent: (error) => error === refused },
      ),
    ).rejects.toMatchObject({
      name: PermanentBootError.name,
      message: 'Temporal: certificate verify failed: UNKNOWN_CA',
    });
    expect(pauses).toEqual([]);
  });
});
