import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { DonationStatus } from './donation-status';
import type { PaymentAction, PaymentEvent } from './provider-events';

/** What a client asks for; validated at the edge. */
export interface DonationRequest {
  campaignId: string;
  amount: number;
  currency: string;
  donor: { name: string; email: string; anonymous: boolean };
  message?: string | undefined;
  paymentMethod: string;
}

/**
 * The donation workflow's input: the request plus everything derived from its idempotency scope,
 * less the donor's own data (name, e-mail, message). The edge writes that to Postgres before the
 * start, so no history ever holds it and erasing a donor is a change of rows
 * (docs/receipts-and-privacy.md).
 */
export interface DonationInput extends Omit<DonationRequest, 'donor' | 'message'> {
  donationId: string;
  clientId: string;
  idempotencyKey: string;
  workflowId: string;
  provider: string;
  /** Seconds to wait for the provider's payment before asking it and closing the payment. */
  paymentTimeoutSeconds: number;
  /**
   * The provider's notifications cannot prove themselves (Midtrans, Xendit): every state change
   * is confirmed with the provider's status API before anything is done about it.
   */
  verifyWithProvider: boolean;
  /**
   * How long past the deadline a payment the provider would not close is still checked before
   * the donation goes to NEEDS_REVIEW.
   */
  settleHorizonSeconds: number;
  correlationId: string;
  /** A pledge's period: keep the method the donor pays with, or charge one kept before. */
  savedMethod?: SavedMethodUse | undefined;
}

/**
 * How a pledge's donation uses a saved payment method: `keep` asks the provider to keep the
 * method the donor pays with; `charge` charges a kept one (the provider's reference) without
 * the donor, who is asked to act only when the provider needs them (authentication).
 */
export type SavedMethodUse = { keep: true } | { charge: string };

export interface DonationState {
  status: DonationStatus;
  providerReference: string | undefined;
  action: PaymentAction | undefined;
  payment: PaymentEvent | undefined;
  /** What happened, in order, including events that were ignored as duplicates or stale. */
  timeline: { at: string; event: string; detail?: string }[];
}

export interface PaymentActionResult {
  donationId: string;
  status: DonationStatus;
  action: PaymentAction;
}

export interface DonationOutcome {
  donationId: string;
  status: DonationStatus;
  credited: boolean;
}

/** A provider notification about the payment itself, delivered by the webhook intake. */
export const paymentEventSignal = defineSignal<[PaymentEvent]>('paymentEvent');

export const getStateQuery = defineQuery<DonationState>('getState');

/**
 * The edge's early return: completes as soon as the provider has created the payment, with what
 * the donor must do to pay. Fails with the activity's typed failure if creation was refused.
 */
export const paymentActionUpdate = defineUpdate<PaymentActionResult>('paymentAction');
