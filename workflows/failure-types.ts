/**
 * Activity failures that no retry can fix. Activities throw them with
 * `ApplicationFailure.nonRetryable(message, type)`; the workflow's retry policies also list them
 * in `nonRetryableErrorTypes` so a plain `ApplicationFailure` of the same type stops too.
 */
export const FailureType = {
  Validation: 'ValidationError',
  CampaignClosed: 'CampaignClosed',
  PaymentDeclined: 'PaymentDeclined',
  AmountMismatch: 'AmountMismatch',
  UnsupportedCurrency: 'UnsupportedCurrency',
} as const;

export type FailureType = (typeof FailureType)[keyof typeof FailureType];

export const nonRetryableErrorTypes: string[] = Object.values(FailureType);
