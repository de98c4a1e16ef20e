import { AppError } from '../errors/error-catalogue';
import type { ProviderRegistry } from '../providers/payment-provider';
import { verifiesWithProvider } from '../providers/provider-verification';
import type { Donation } from './donation';
import { refundRequestWorkflowId } from '../../workflows/contracts';
import type { RefundRequestInput } from '../../workflows/contracts';

/** What an operator's refund would start; the ops CLI's dry run prints it. */
export interface RefundPlan {
  donation: Donation;
  refund: RefundRequestInput;
  /** The workflow of this refund request. */
  workflowId: string;
}

/** A donation whose money can still be refunded, in part or in full. */
const REFUNDABLE: readonly string[] = ['CONFIRMED', 'PARTIALLY_REFUNDED'];

/**
 * The refund request of an operator, or the problem that refuses it: apart from the service so
 * the refusals are read in one place, before anything is started.
 */
export function planRefund(
  donation: Donation,
  providers: ProviderRegistry,
  request: { amount: number | undefined; reason: string; requestKey: string },
): RefundPlan {
  const { amount, reason, requestKey } = request;
  if (!REFUNDABLE.includes(donation.status) || !donation.providerReference) {
    throw new AppError('donation-not-refundable', {
      detail: `The donation is ${donation.status}.`,
    });
  }
  const provider = providers.get(donation.provider);
  if (!provider?.refundable(donation.paymentMethod)) {
    throw new AppError('donation-not-refundable', {
      detail: `${donation.provider} cannot refund ${donation.paymentMethod} payments by API.`,
    });
  }
  const refund: RefundRequestInput = {
    donationId: donation.id,
    campaignId: donation.campaignId,
    provider: donation.provider,
    providerReference: donation.providerReference,
    verifyWithProvider: verifiesWithProvider(providers, donation.provider),
    amount: Math.min(amount ?? donation.amount, donation.amount),
    currency: donation.currency,
    reason,
    requestKey,
  };
  return { donation, refund, workflowId: refundRequestWorkflowId(donation.id, requestKey) };
}
