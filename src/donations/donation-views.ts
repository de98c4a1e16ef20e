import type { Donation } from './donation';
import type { DonationAccepted, DonationView } from './donation-schemas';
import type { DonationInput } from '../../workflows/contracts';
import type { DonorDetails } from './donor-details-repository';
import { ANONYMOUS_NAME } from './public-name';

// How the API shows a donation: from its row, or from its started workflow's input.

/** The answer to POST once the payment action exists (or the row says it was refused). */
export function acceptedAnswer(donation: Donation, status: string): DonationAccepted {
  return {
    id: donation.id,
    status,
    campaignId: donation.campaignId,
    amount: donation.amount,
    currency: donation.currency,
    paymentAction: donation.paymentAction,
    links: { self: `/v1/donations/${donation.id}` },
  };
}

/** The answer before the payment action exists: 202 PENDING; the GET shows the action. */
export function pendingAnswer(input: DonationInput): DonationAccepted {
  return {
    id: input.donationId,
    status: 'PENDING',
    campaignId: input.campaignId,
    amount: input.amount,
    currency: input.currency,
    paymentAction: null,
    links: { self: `/v1/donations/${input.donationId}` },
  };
}

/**
 * A donation whose workflow started but has not recorded it yet, as its input describes it,
 * with the donor the edge took (none once erased).
 */
export function startedView(
  input: DonationInput,
  startedAt: Date,
  details: DonorDetails | undefined,
): DonationView {
  const anonymous = details?.donor.anonymous ?? true;
  const at = startedAt.toISOString();
  return {
    id: input.donationId,
    status: 'PENDING',
    campaignId: input.campaignId,
    amount: input.amount,
    currency: input.currency,
    donor: {
      name: anonymous ? ANONYMOUS_NAME : (details?.donor.name ?? ANONYMOUS_NAME),
      anonymous,
    },
    message: details?.message ?? null,
    paymentMethod: input.paymentMethod,
    provider: input.provider,
    paymentAction: null,
    failureReason: null,
    confirmedAt: null,
    createdAt: at,
    updatedAt: at,
    workflowId: input.workflowId,
  };
}

export function toView(donation: Donation): DonationView {
  return {
    id: donation.id,
    status: donation.status,
    campaignId: donation.campaignId,
    amount: donation.amount,
    currency: donation.currency,
    donor: {
      name: donation.donor.anonymous ? ANONYMOUS_NAME : donation.donor.name,
      anonymous: donation.donor.anonymous,
    },
    message: donation.message,
    paymentMethod: donation.paymentMethod,
    provider: donation.provider,
    paymentAction: donation.paymentAction,
    failureReason: donation.failureReason,
    confirmedAt: donation.confirmedAt?.toISOString() ?? null,
    createdAt: donation.createdAt.toISOString(),
    updatedAt: donation.updatedAt.toISOString(),
    workflowId: donation.workflowId,
  };
}
