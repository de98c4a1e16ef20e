export type BreakerState = 'closed' | 'open' | 'half-open';

export interface CircuitBreakerOptions {
  /** Consecutive failures that open the circuit. */
  failureThreshold: number;
  /** How long an open circuit refuses calls before it lets one probe through. */
  cooldownMs: number;
  /** A call slower than this counts as failed; its late result is ignored. */
  timeoutMs: number;
  now?: () => number;
  onStateChange?: (state: BreakerState) => void;
}

/** Thrown instead of calling the dependency while the circuit is open. */
export class CircuitOpenError extends Error {
  constructor() {
    super('circuit open');
    this.name = 'CircuitOpenError';
  }
}

/**
 * Stops calling a dependency that keeps failing, so a dead cache costs nothing per request
 * instead of a timeout each. After the cooldown one call probes it; success closes the circuit.
 */
export class CircuitBreaker {
  private failures = 0;
  private openedAt = 0;
  private probing = false;
  private current: BreakerState = 'closed';
  private readonly now: () => number;

  constructor(private readonly options: CircuitBreakerOptions) {
    this.now = options.now ?? Date.now;
  }

  get state(): BreakerState {
    return this.current;
  }

  async call<T>(operation: () => Promise<T>): Promise<T> {
    if (this.current === 'open') {
      if (this.now() - this.openedAt < this.options.cooldownMs) throw new CircuitOpenError();
      this.transition('half-open');
    }
    let probe = false;
    if (this.current === 'half-open') {
      if (this.probing) throw new CircuitOpenError();
      this.probing = probe = true;
    }
    try {
      const result = await withTimeout(operation(), this.options.timeoutMs);
      this.failures = 0;
      if (this.current !== 'closed') this.transition('closed');
      return result;
    } catch (error) {
      this.failures += 1;
      if (this.current === 'half-open' || this.failures >= this.options.failureThreshold) {
        this.openedAt = this.now();
        this.transition('open');
      }
      throw error;
    } finally {
      if (probe) this.probing = false;
    }
  }

  private transition(state: BreakerState): void {
    this.current = state;
    this.options.onStateChange?.(state);
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`timed out after ${ms} ms`));
    }, ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
