import type { ErrorCode } from '../errors/error-catalogue';
import { FailureType } from '../../workflows/contracts';

/** Typed, non-retryable workflow failures → the 4xx the client gets (and the edge caches). */
export const failureTypeCodes: Partial<Record<string, ErrorCode>> = {
  [FailureType.CampaignClosed]: 'campaign-closed',
  [FailureType.PaymentDeclined]: 'payment-declined',
  [FailureType.UnsupportedCurrency]: 'unsupported-currency',
  [FailureType.Validation]: 'validation-failed',
};

/** A donation's recorded failure reason, for answering after its workflow has closed. */
export const failureReasonCodes: Partial<Record<string, ErrorCode>> = {
  'campaign-closed': 'campaign-closed',
  'currency-mismatch': 'currency-mismatch',
  'unsupported-by-provider': 'validation-failed',
  'payment-declined': 'payment-declined',
  'provider-refused': 'validation-failed',
};

/** The message of a workflow failure's cause, for the problem's detail. */
export function failureMessage(error: unknown): string | undefined {
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error ? cause.message : undefined;
}
