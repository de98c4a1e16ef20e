import type { PaymentEvent, PaymentStatus } from '../../workflows/payment-event';

/** What the donor does to pay: scan a QR string, follow a redirect, transfer to an account. */
export interface PaymentAction {
  type: 'qr' | 'redirect' | 'virtual_account';
  value: string;
}

export interface CreatePaymentRequest {
  /** Derived from the donation and the operation, never from a workflow run: see docs. */
  idempotencyKey: string;
  /** Our donation id; providers echo it back in notifications. */
  reference: string;
  amount: number;
  currency: string;
  method: string;
  description: string;
}

export interface CreatedPayment {
  providerReference: string;
  status: PaymentStatus;
  action: PaymentAction;
}

export interface RefundRequest {
  /** Derived from the donation: `<donation id>:refund`. */
  idempotencyKey: string;
  providerReference: string;
  /** Minor units; the whole payment unless smaller. */
  amount: number;
  reason: string;
}

export interface PaymentSnapshot {
  providerReference: string;
  status: PaymentStatus;
  amount: number;
  currency: string;
}

/** A verified, normalized notification. */
export interface WebhookEvent extends PaymentEvent {
  /** Our donation id as the provider echoed it. */
  donationRef: string;
  providerReference: string;
  raw: unknown;
}

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

/** A provider failure worth retrying (network, 5xx, 429); anything else is final. */
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
   * The provider's notifications cannot prove their own freshness (no signed timestamp, or a
   * shared token instead of a signature): the workflow asks the status API before crediting.
   */
  readonly verifyBeforeCredit: boolean;
  /** Idempotent on `request.idempotencyKey`: a repeat returns the same payment. */
  createPayment(request: CreatePaymentRequest): Promise<CreatedPayment>;
  fetchStatus(providerReference: string): Promise<PaymentSnapshot>;
  /** Cancels a payment that was not paid; cancelling a cancelled payment is a no-op. */
  cancel(providerReference: string): Promise<PaymentSnapshot>;
  /** Refunds a paid payment, idempotent on `request.idempotencyKey`. */
  refund(request: RefundRequest): Promise<PaymentSnapshot>;
  /** Verifies the signature over the exact bytes received, then normalizes. */
  parseWebhook(rawBody: Buffer, headers: WebhookHeaders): WebhookEvent;
}

/** The configured providers by name. */
export type ProviderRegistry = ReadonlyMap<string, PaymentProvider>;
