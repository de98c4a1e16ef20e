import { createLegacyActivities } from '../../activities/legacy-activities';
import type { ActivityDeps } from '../../activities/activity-deps';
import type { PaymentProvider, RefundRequest } from '../../src/providers/payment-provider';

/** A provider that records the refunds it is asked for and reports the payment paid. */
function recordingProvider(name: string, keys: string[]): PaymentProvider {
  return {
    name,
    verifyBeforeCredit: false,
    supports: () => true,
    refundable: () => true,
    createPayment: () => Promise.reject(new Error('unused')),
    cancel: () => Promise.reject(new Error('unused')),
    parseWebhook: () => {
      throw new Error('unused');
    },
    refund: (request: RefundRequest) => {
      keys.push(request.idempotencyKey);
      return Promise.resolve({ refundId: 're_1', status: 'SUCCEEDED', amount: request.amount });
    },
    fetchPayment: (providerReference) =>
      Promise.resolve({
        providerReference,
        status: 'PAID',
        amount: 10_000,
        currency: 'IDR',
        refunds: [],
        disputes: [],
      }),
  };
}

describe('activities of workflows started before money-v2', () => {
  it('refund under the key v1 used, so a v1 run retried after the upgrade refunds once', async () => {
    const keys: string[] = [];
    const providers = new Map(
      ['simulator', 'stripe', 'midtrans'].map((name) => [name, recordingProvider(name, keys)]),
    );
    const deps = {
      providers,
      donations: { findById: () => Promise.resolve(undefined) },
    } as unknown as ActivityDeps;
    const activities = createLegacyActivities(deps);
    for (const provider of ['simulator', 'stripe', 'midtrans']) {
      await activities.refundPayment({
        donationId: 'd1',
        provider,
        providerReference: 'pay_1',
        amount: 10_000,
        reason: 'test',
      });
    }
    // Midtrans never accepted the colon, so no v1 refund exists there under it.
    expect(keys).toEqual(['d1:refund', 'd1:refund', 'd1-refund']);
  });
});
