import type { DonationStatus, PaymentAction } from '../../workflows/contracts';

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
  /** Set when reconciliation stopped handing the donation back; operators look at these. */
  deadLetteredAt: Date | null;
  deadLetterReason: string | null;
  confirmedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}
