import { CircuitBreaker, CircuitOpenError } from '../../src/resilience/circuit-breaker';
import type { BreakerState } from '../../src/resilience/circuit-breaker';

describe('circuit breaker', () => {
  const setup = () => {
    let now = 0;
    const states: BreakerState[] = [];
    const breaker = new CircuitBreaker({
      failureThreshold: 3,
      cooldownMs: 1_000,
      timeoutMs: 50,
      now: () => now,
      onStateChange: (state) => states.push(state),
    });
    return { breaker, states, advance: (ms: number) => (now += ms) };
  };
  const fail = () => Promise.reject(new Error('down'));
  const succeed = () => Promise.resolve('ok');

  it('opens after consecutive failures and then refuses without calling', async () => {
    const { breaker, states } = setup();
    for (let i = 0; i < 3; i++) await expect(breaker.call(fail)).rejects.toThrow('down');
    expect(breaker.state).toBe('open');
    const operation = jest.fn(succeed);
    await expect(breaker.call(operation)).rejects.toBeInstanceOf(CircuitOpenError);
    expect(operation).not.toHaveBeenCalled();
    expect(states).toEqual(['open']);
  });

  it('a success resets the count of failures', async () => {
    const { breaker } = setup();
    await expect(breaker.call(fail)).rejects.toThrow();
    await expect(breaker.call(fail)).rejects.toThrow();
    await breaker.call(succeed);
    await expect(breaker.call(fail)).rejects.toThrow();
    expect(breaker.state).toBe('closed');
  });

  it('lets one probe through after the cooldown; success closes, failure reopens', async () => {
    const { breaker, states, advance } = setup();
    for (let i = 0; i < 3; i++) await expect(breaker.call(fail)).rejects.toThrow();
    advance(1_001);
    await expect(breaker.call(fail)).rejects.toThrow('down');
    expect(breaker.state).toBe('open');
    await expect(breaker.call(succeed)).rejects.toBeInstanceOf(CircuitOpenError);

    advance(1_001);
    let release: (value: string) => void = () => undefined;
    const probe = breaker.call(() => new Promise<string>((resolve) => (release = resolve)));
    // While the probe is out, everyone else is still refused.
    await expect(breaker.call(succeed)).rejects.toBeInstanceOf(CircuitOpenError);
    release('ok');
    await expect(probe).resolves.toBe('ok');
    expect(breaker.state).toBe('closed');
    expect(states).toEqual(['open', 'half-open', 'open', 'half-open', 'closed']);
  });

  it('counts a call slower than the timeout as failed', async () => {
    const { breaker } = setup();
    const slow = () =>
      new Promise<string>((resolve) =>
        setTimeout(() => {
          resolve('late');
        }, 200),
      );
    await expect(breaker.call(slow)).rejects.toThrow(/timed out/);
  });
});
