import { ProviderRejected } from '../src/providers/http-json';
import type { DonationStatus, PaymentEventV1, PaymentSnapshot } from '../workflows/contracts';
import { providerOf } from './activity-deps';
import type { ActivityDeps } from './activity-deps';
import type { DonationActivities } from './donation-activities';

export interface LegacyReversalResult {
  status: DonationStatus;
  reversed: boolean;
  amount: number;
  campaignId: string;
}

/**
 * Activities only workflows started before money-v2 call, with the answers those workflows
 * expect (workflows/legacy/). Remove together with them once none run.
 */
export function createLegacyActivities(deps: ActivityDeps) {
  return {
    async fetchPaymentStatus(provider: string, reference: string): Promise<PaymentEventV1> {
      return v1Event(await providerOf(deps, provider).fetchPayment(reference), 'status');
    },

    async cancelPayment(provider: string, reference: string): Promise<PaymentEventV1> {
      const gateway = providerOf(deps, provider);
      try {
        return v1Event((await gateway.cancel(reference)).payment, 'cancel');
      } catch (error) {
        if (!(error instanceof ProviderRejected)) throw error;
        return v1Event(await gateway.fetchPayment(reference), 'status');
      }
    },

    /** v1 reversed at most once per kind: the entry is keyed `v1` to keep that. */
    async recordReversal(
      donationId: string,
      kind: 'REFUND' | 'CHARGEBACK',
      amount: number,
    ): Promise<LegacyReversalResult> {
      const before = await deps.donations.findById(donationId);
      const result = await deps.ledger.post(donationId, [
        { entryType: kind, externalRef: 'v1', amount: Math.min(amount, before?.amount ?? amount) },
      ]);
      return {
        status: result.status,
        reversed: result.inserted > 0,
        amount: result.inserted > 0 ? amount : 0,
        campaignId: result.campaignId,
      };
    },

    async refundPayment(request: {
      donationId: string;
      provider: string;
      providerReference: string;
      amount: number;
      reason: string;
    }): Promise<PaymentEventV1> {
      const donation = await deps.donations.findById(request.donationId);
      const gateway = providerOf(deps, request.provider);
      await gateway.refund({
        // The key v1 refunded under, so a v1 run retried after the upgrade meets its own refund;
        // Midtrans never took it (`refund_key` allows no colon), so none exists there under it.
        idempotencyKey:
          request.provider === 'midtrans'
            ? `${request.donationId}-refund`
            : `${request.donationId}:refund`,
        providerReference: request.providerReference,
        amount: request.amount,
        currency: donation?.currency ?? 'IDR',
        reason: request.reason,
      });
      return v1Event(await gateway.fetchPayment(request.providerReference), 'refund');
    },
  };
}

/** What a v1 workflow may call: today's shared activities plus the ones only it uses. */
export type LegacyActivities = Pick<
  DonationActivities,
  | 'recordDonation'
  | 'createPayment'
  | 'confirmDonation'
  | 'failDonation'
  | 'invalidateCampaignCache'
> &
  ReturnType<typeof createLegacyActivities>;

function v1Event(snapshot: PaymentSnapshot, source: string): PaymentEventV1 {
  const refunded = snapshot.refunds
    .filter((r) => r.status === 'SUCCEEDED')
    .reduce((sum, r) => sum + r.amount, 0);
  const status: PaymentEventV1['status'] =
    snapshot.status !== 'PAID'
      ? snapshot.status
      : snapshot.disputes.some((d) => d.status !== 'WON')
        ? 'CHARGED_BACK'
        : refunded >= snapshot.amount
          ? 'REFUNDED'
          : refunded > 0
            ? 'PARTIALLY_REFUNDED'
            : 'PAID';
  return {
    eventKey: `${source}:${snapshot.providerReference}:${status}`,
    status,
    amount: snapshot.amount,
    currency: snapshot.currency,
    occurredAt: new Date().toISOString(),
  };
}
