import { defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';

type Interceptor = ReturnType<typeof makeGrpcRetryInterceptor>;

/**
 * The SDK's retries of a failed gRPC call (UNAVAILABLE, RESOURCE_EXHAUSTED, …), except that a
 * backoff that would end past the call's deadline is not waited out: the call fails at once
 * with what Temporal last said. The SDK's backoff grows to 5 s, so a Temporal that resets every
 * connection held a donor's request seconds past the deadline the edge gave it.
 */
export function retryWithinDeadline(): Interceptor {
  const sdk = defaultGrpcRetryOptions();
  return (options, nextCall) => {
    const deadline = options.deadline === undefined ? Infinity : Number(options.deadline);
    let delayMs = 0;
    const retry = makeGrpcRetryInterceptor({
      retryableDecider(attempt, status) {
        if (!sdk.retryableDecider(attempt, status)) return false;
        delayMs = sdk.delayFunction(attempt, status);
        return Date.now() + delayMs < deadline;
      },
      // Asked right after the decider, for the same attempt: the delay it weighed.
      delayFunction: () => delayMs,
    });
    return retry(options, nextCall);
  };
}
