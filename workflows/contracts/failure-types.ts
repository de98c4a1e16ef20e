/**
 * Activity failures that no retry can fix. Activities throw them with
 * `ApplicationFailure.nonRetryable(message, type)`; the retry policies also list them in
 * `nonRetryableErrorTypes` so a plain `ApplicationFailure` of the same type stops too.
 */
export const FailureType = {
  Validation: 'ValidationError',
  CampaignClosed: 'CampaignClosed',
  PaymentDeclined: 'PaymentDeclined',
  UnsupportedCurrency: 'UnsupportedCurrency',
  /** The donation was decided before this run (an operator's reset, a hand-back). */
  AlreadyDecided: 'AlreadyDecided',
  /** The provider cannot do this for this payment (e.g. refund a virtual-account payment). */
  NotSupported: 'NotSupported',
  /** Postgres can never store the input (SQLSTATE class 22, a check constraint). */
  InvalidData: 'InvalidData',
  /** A failure no one mapped, the same after every attempt of a bounded number. */
  Permanent: 'PermanentFailure',
} as const;

export type FailureType = (typeof FailureType)[keyof typeof FailureType];

export const nonRetryableErrorTypes: string[] = Object.values(FailureType);

/**
 * Why a donation was refused before the donor could pay, as the row records it, with the typed
 * failure each one is. The edge maps each reason to its problem (src/donations/donation-failures.ts).
 */
export const refusalFailureTypes = {
  'campaign-closed': FailureType.CampaignClosed,
  'currency-mismatch': FailureType.Validation,
  'unsupported-by-provider': FailureType.Validation,
  'payment-declined': FailureType.PaymentDeclined,
  'provider-refused': FailureType.Validation,
} as const satisfies Record<string, FailureType>;

export type RefusalReason = keyof typeof refusalFailureTypes;

/** The refusal a recorded failure reason names, if it is one. */
export function refusalReason(reason: string | null | undefined): RefusalReason | undefined {
  return reason != null && Object.hasOwn(refusalFailureTypes, reason)
    ? (reason as RefusalReason)
    : undefined;
}

/** Why the donation workflow ended a payment without money, as the row records it. */
export type EndingReason =
  | 'payment-declined'
  | 'canceled-at-provider'
  | 'no-payment-before-deadline'
  | 'payment-unsettled-after-horizon'
  /** A step failed for good (src/temporal/permanent-failure-interceptor.ts). */
  | 'step-failed-for-good'
  | `paid ${number} ${string}, expected ${number} ${string}`;
