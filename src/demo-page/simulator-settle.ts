import { AppError } from '../errors/error-catalogue';

/**
 * Asks the payment simulator to settle one of its payments now, as a sandbox's "simulate
 * payment" button does; the simulator then sends its signed webhook like any settlement.
 */
export async function settleAtSimulator(simulatorUrl: string, paymentId: string): Promise<string> {
  const url = new URL(`/v1/payments/${encodeURIComponent(paymentId)}/simulate`, simulatorUrl);
  let response: Response;
  try {
    response = await fetch(url, { method: 'POST', signal: AbortSignal.timeout(5_000) });
  } catch (error) {
    throw new AppError('service-unavailable', {
      detail: 'The payment simulator did not answer.',
      retryAfter: 1,
      cause: error,
    });
  }
  if (!response.ok) {
    throw new AppError('service-unavailable', {
      detail: `The payment simulator answered ${response.status}.`,
      retryAfter: 1,
    });
  }
  const payment = (await response.json()) as { status: string };
  return payment.status;
}
