/**
 * Activity failures that no retry can fix. Activities throw them with
 * `ApplicationFailure.nonRetryable(message, type)`; the retry policies also list them in
 * `nonRetryableErrorTypes` so a plain `ApplicationFailure` of the same type stops too.
 */
export const FailureType = {
  Validation: 'ValidationError',
  CampaignClosed: 'CampaignClosed',
  PaymentDeclined: 'PaymentDeclined',
  AmountMismatch: 'AmountMismatch',
  UnsupportedCurrency: 'UnsupportedCurrency',
  /** The donation was decided before this run (an operator's reset, a hand-back). */
  AlreadyDecided: 'AlreadyDecided',
  /** The provider cannot do this for this payment (e.g. refund a virtual-account payment). */
  NotSupported: 'NotSupported',
} as const;

export type FailureType = (typeof FailureType)[keyof typeof FailureType];

export const nonRetryableErrorTypes: string[] = Object.values(FailureType);
