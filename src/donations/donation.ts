import type { DonationStatus } from '../db/schema';
import type { PaymentAction } from '../providers/payment-provider';

/** What a client asks for; validated at the edge, carried into the workflow unchanged. */
export interface DonationRequest {
  campaignId: string;
  amount: number;
  currency: string;
  donor: { name: string; email: string; anonymous: boolean };
  message?: string | undefined;
  paymentMethod: string;
}

/** The workflow's input: the request plus everything derived from its idempotency scope. */
export interface DonationInput extends DonationRequest {
  donationId: string;
  clientId: string;
  idempotencyKey: string;
  workflowId: string;
  provider: string;
  /** Seconds to wait for the provider's payment before asking it and expiring. */
  paymentTimeoutSeconds: number;
  /**
   * The provider's notifications cannot prove themselves (Midtrans, Xendit): a paid event is
   * confirmed with the provider's status API before anything is credited.
   */
  verifyPaymentStatus?: boolean;
  correlationId: string;
}

export interface Donation {
  id: string;
  clientId: string;
  campaignId: string;
  amount: number;
  currency: string;
  donor: { name: string; email: string; anonymous: boolean };
  message: string | null;
  paymentMethod: string;
  status: DonationStatus;
  provider: string;
  providerReference: string | null;
  paymentAction: PaymentAction | null;
  workflowId: string;
  failureReason: string | null;
  confirmedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** Statuses from which a payment can still be credited or given up. */
export const OPEN_STATUSES = ['PENDING', 'AWAITING_PAYMENT'] as const satisfies DonationStatus[];

export type FinalFailureStatus = Extract<
  DonationStatus,
  'FAILED' | 'EXPIRED' | 'CANCELED' | 'NEEDS_REVIEW'
>;

/** The workflow ID of a donation; operators see it in the Temporal UI. */
export function donationWorkflowId(donationId: string): string {
  return `donation-${donationId}`;
}
