import Stripe from 'stripe';
import { ProviderRejected } from '../http-json';
import { ProviderUnavailable } from '../payment-provider';

/**
 * Maps what stripe-node throws onto galang's classes, as stripe-node itself decides retries
 * (RequestSender._shouldRetry): the `Stripe-Should-Retry` header first, then connection errors,
 * 409 (`idempotency_key_in_use`: the first request with the key is still running), 429 and 5xx
 * are transient; any other answer is final. Temporal owns the retries (`maxNetworkRetries: 0`).
 */
export function mapStripeError(error: unknown): Error {
  if (!(error instanceof Stripe.errors.StripeError)) return error as Error;
  const shouldRetry = error.headers?.['stripe-should-retry'];
  const status = error.statusCode;
  const transient =
    shouldRetry === 'true' ||
    (shouldRetry !== 'false' &&
      (error instanceof Stripe.errors.StripeConnectionError ||
        status === undefined ||
        status === 409 ||
        status === 429 ||
        status >= 500));
  if (transient) {
    return new ProviderUnavailable(`Stripe ${status ?? 'connection'}: ${error.message}`, {
      cause: error,
    });
  }
  return new ProviderRejected(status ?? 400, {
    error: { type: error.rawType, code: error.code, message: error.message },
  });
}

/** Runs a Stripe call with its errors mapped. */
export async function stripeCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw mapStripeError(error);
  }
}
