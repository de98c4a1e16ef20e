import type {
  PaymentAction,
  PaymentSnapshot,
  PaymentStatus,
  ProviderEvent,
  RefundRecord,
  SavedMethodUse,
} from '../../workflows/contracts';

export interface CreatePaymentRequest {
  /** Derived from the donation and the operation, never from a workflow run: see docs. */
  idempotencyKey: string;
  /** Our donation id; providers echo it back in notifications ("reference" is always theirs). */
  donationId: string;
  /** Minor units of `currency`; the adapter converts to what the provider takes. */
  amount: number;
  currency: string;
  method: string;
  description: string;
  /**
   * A pledge's period: keep the donor's method (its snapshot names it once paid), or charge a
   * kept one without the donor. Only for a method {@link PaymentProvider.keepsMethods} takes.
   */
  savedMethod?: SavedMethodUse | undefined;
}

export interface CreatedPayment {
  providerReference: string;
  status: PaymentStatus;
  action: PaymentAction;
}

export interface RefundRequest {
  /**
   * Derived from the donation and the refund request, in `[A-Za-z0-9_-]` (Midtrans' `refund_key`
   * allows nothing else); the adapter sends it as the provider's idempotency key.
   */
  idempotencyKey: string;
  providerReference: string;
  /** Minor units. */
  amount: number;
  currency: string;
  reason: string;
}

/**
 * What a cancel did. `accepted` is false when the provider refused to close the payment (a
 * Stripe PaymentIntent in `processing`, a payment already paid); `payment` is then its state.
 */
export interface CancelResult {
  accepted: boolean;
  payment: PaymentSnapshot;
}

/**
 * A verified notification that a payment's money moved without saying how (Stripe's
 * `charge.refunded`, which names no refund): galang reads the payment's record instead.
 */
export interface PaymentHint {
  kind: 'hint';
  eventKey: string;
  providerReference: string;
  /** What the notification was, for the inbox and the logs. */
  reason: string;
}

/**
 * A verified notification: a normalized event about one payment, a hint to read one, or one
 * galang has no use for (answered 2xx so the provider stops retrying, and kept in the inbox).
 */
export type WebhookEvent =
  | ((ProviderEvent | PaymentHint) & {
      /** Our donation id as the provider echoed it, when it does. */
      donationRef: string | undefined;
    })
  | {
      kind: 'ignored';
      eventKey: string;
      reason: string;
      /** Money may have moved in a way galang cannot follow: an operator must look. */
      needsReview?: true;
    };

export type WebhookRejection = 'signature' | 'malformed';

/** Thrown by `parseWebhook`; the route maps `signature` to 401 and `malformed` to 400. */
export class WebhookRejected extends Error {
  constructor(
    readonly reason: WebhookRejection,
    message: string,
  ) {
    super(message);
    this.name = 'WebhookRejected';
  }
}

/** A provider failure worth retrying (network, 5xx, 429, 409 in-use); anything else is final. */
export class ProviderUnavailable extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ProviderUnavailable';
  }
}

export type WebhookHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** One payment gateway, as the activities and the webhook intake use it. */
export interface PaymentProvider {
  readonly name: string;
  /**
   * The provider's notifications cannot prove themselves (no signed body, or a signature that
   * leaves the status out): every state change is confirmed with its status API first.
   */
  readonly verifyWithProvider: boolean;
  /** Currencies and methods the provider takes; the edge refuses others with a 422. */
  supports(currency: string, method: string): boolean;
  /** Whether a payment made with this method can be refunded through the API. */
  refundable(method: string): boolean;
  /**
   * Whether a payment with this method can be kept and charged again without the donor (a
   * card); a QR code or a virtual account needs the donor every time (docs/pledges.md).
   */
  keepsMethods(method: string): boolean;
  /**
   * Releases a method kept for a pledge (its `savedMethod` reference), so the provider holds the
   * donor's card no longer and nothing can charge it; one released already counts as released.
   * Only on a provider whose {@link keepsMethods} takes some.
   */
  releaseMethod?(savedMethod: string): Promise<void>;
  /**
   * Idempotent on `request.idempotencyKey`: a repeat returns the same payment. A charge of a
   * saved method the issuer declines (funds, an expired card) throws a 402 {@link ProviderRejected};
   * one that needs the donor to authenticate comes back PENDING with their action.
   */
  createPayment(request: CreatePaymentRequest): Promise<CreatedPayment>;
  /** The payment's whole truth: status, refunds and disputes. An expired payment is EXPIRED. */
  fetchPayment(providerReference: string): Promise<PaymentSnapshot>;
  /** Closes an unpaid payment; closing a closed one is accepted. */
  cancel(providerReference: string): Promise<CancelResult>;
  /**
   * Asks for a refund, idempotent on `request.idempotencyKey`: a repeat answers the same
   * refund. A refund the provider denies comes back FAILED, not as an error.
   */
  refund(request: RefundRequest): Promise<RefundRecord>;
  /** Verifies the notification over the exact bytes received, then normalizes it. */
  parseWebhook(rawBody: Buffer, headers: WebhookHeaders): WebhookEvent;
}

/** The configured providers by name. */
export type ProviderRegistry = ReadonlyMap<string, PaymentProvider>;
