/**
 * An LMDB commit of the idempotency store failed (a full disk or a full /dev/shm, an I/O error):
 * nothing of that transaction was written. The edge answers 503 with Retry-After; it is never a
 * 500, and never the reason a claim outlives its request.
 */
export class StoreWriteError extends Error {
  override readonly name = 'StoreWriteError';

  constructor(
    readonly environment: string,
    cause: unknown,
  ) {
    super(`The idempotency store could not write its ${environment}`, { cause });
  }
}

/**
 * The reason a failed lmdb-js write failed (ENOSPC…), or undefined when `error` is not a failed
 * write (a callback that threw). lmdb-js rejects the commit with a generic error whose
 * `commitError` is a second promise, rejected with the reason in the same callback; nobody else
 * awaits that one, and an unhandled rejection would end the process: observing it here is what
 * keeps one full disk from crashing the API.
 */
export async function commitFailure(error: unknown): Promise<unknown> {
  const { commitError, code } = (error ?? {}) as { commitError?: unknown; code?: unknown };
  // A write refused before its commit (msgpackr saving a record shape): LMDB's or the OS' code.
  if (!(commitError instanceof Promise)) return typeof code === 'number' ? error : undefined;
  const reason = commitError.then(
    () => error,
    (cause: unknown) => cause,
  );
  // Settled already; the fallback only guards against a library that someday leaves it pending.
  const fallback = new Promise<unknown>((resolve) => {
    setImmediate(() => {
      resolve(error);
    });
  });
  return Promise.race([reason, fallback]);
}
