import type { ErrorCode } from '../errors/error-catalogue';
import { FailureType, refusalReason } from '../../workflows/contracts';
import type { RefusalReason } from '../../workflows/contracts';

/**
 * Every problem a request for a donation may be refused with (unknown, closed or other-currency
 * campaign, a provider being retired, a declined payment): final for that request, no retry
 * changes it. POST /v1/donations and /v1/pledges answer them; a pledge's period is left
 * uncharged by them.
 */
export const DONATION_REFUSALS = [
  'campaign-not-found',
  'campaign-closed',
  'currency-mismatch',
  'unsupported-currency',
  'provider-closing',
  'payment-declined',
] as const satisfies readonly ErrorCode[];

/** Typed, non-retryable workflow failures → the 4xx the client gets (and the edge caches). */
export const failureTypeCodes: Partial<Record<string, ErrorCode>> = {
  [FailureType.CampaignClosed]: 'campaign-closed',
  [FailureType.PaymentDeclined]: 'payment-declined',
  [FailureType.UnsupportedCurrency]: 'unsupported-currency',
  [FailureType.Validation]: 'validation-failed',
};

/** Each refusal the row may record → its problem, for answering after the workflow closed. */
const refusalCodes: Record<RefusalReason, ErrorCode> = {
  'campaign-closed': 'campaign-closed',
  'currency-mismatch': 'currency-mismatch',
  'unsupported-by-provider': 'validation-failed',
  'payment-declined': 'payment-declined',
  'provider-refused': 'validation-failed',
};

/** The problem of a donation's recorded failure reason, if that reason is a refusal. */
export function refusalCode(failureReason: string | null | undefined): ErrorCode | undefined {
  const reason = refusalReason(failureReason);
  return reason && refusalCodes[reason];
}

/** The message of a workflow failure's cause, for the problem's detail. */
export function failureMessage(error: unknown): string | undefined {
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error ? cause.message : undefined;
}
