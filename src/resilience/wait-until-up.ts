/** The few log methods a wait needs (pino's Logger has them). */
export interface WaitLog {
  warn(object: object, message: string): void;
  info(object: object, message: string): void;
}

export interface WaitOptions {
  log: WaitLog;
  /** A misconfiguration no wait cures (a certificate that does not verify, refused credentials). */
  isPermanent: (error: unknown) => boolean;
  /** What to say about a failure, e.g. a hint for an operator; its message by default. */
  describe?: (error: unknown) => string;
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** How often a wait that goes on is logged again, at most. */
  repeatLogMs?: number;
  /** Injected for tests. */
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

/** A dependency refused in a way no wait cures; boot stops with this message. */
export class PermanentBootError extends Error {
  override readonly name = 'PermanentBootError';
}

const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, ms).unref();
  });

/** An error's message and those of its causes that add something ("failed to connect: 16 …"). */
export function messageWithCauses(error: unknown): string {
  const parts: string[] = [];
  for (let current = error, depth = 0; current !== undefined && depth < 8; depth++) {
    const message =
      current instanceof Error
        ? current.message
        : typeof current === 'string'
          ? current
          : JSON.stringify(current);
    if (!parts.some((part) => part.includes(message))) parts.push(message);
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join(': ');
}

/**
 * Runs `attempt` until it succeeds, waiting between tries with capped exponential backoff and
 * jitter: a dependency that is still starting (or down) at boot is waited for, not exited on.
 * The log stays bounded: the first failure, then at most one line per `repeatLogMs` while it
 * goes on, and one when it is over. A permanent failure ends the wait as a
 * {@link PermanentBootError} naming the dependency.
 */
export async function waitUntilUp<T>(
  what: string,
  attempt: () => Promise<T>,
  options: WaitOptions,
): Promise<T> {
  const {
    log,
    initialDelayMs = 250,
    maxDelayMs = 10_000,
    repeatLogMs = 60_000,
    now = Date.now,
  } = options;
  const pause = options.sleep ?? sleep;
  const describe = options.describe ?? messageWithCauses;
  const startedAt = now();
  let delayMs = initialDelayMs;
  let loggedAt: number | undefined;
  for (let attempts = 1; ; attempts++) {
    try {
      const result = await attempt();
      if (loggedAt !== undefined) {
        log.info({ dependency: what, attempts, waitedMs: now() - startedAt }, `${what} is up`);
      }
      return result;
    } catch (error) {
      if (options.isPermanent(error)) {
        throw new PermanentBootError(`${what}: ${describe(error)}`, { cause: error });
      }
      if (loggedAt === undefined || now() - loggedAt >= repeatLogMs) {
        loggedAt = now();
        log.warn(
          { dependency: what, attempts, waitedMs: loggedAt - startedAt, reason: describe(error) },
          `waiting for ${what}`,
        );
      }
    }
    // Jittered: processes that booted together do not all knock at once.
    await pause(delayMs / 2 + Math.random() * (delayMs / 2));
    delayMs = Math.min(delayMs * 2, maxDelayMs);
  }
}
