import { createDonationActivities } from '../../activities/donation-activities';
import { DonationRepository } from '../../src/donations/donation-repository';
import { donationInput } from '../support/donation-stubs';
import { ledgerActivities } from '../support/ledger-activities';
import { createCampaign } from '../support/stack';
import { snapshot } from '../support/stub-worker';

/**
 * The first step of a run that finds its donation ended (an operator's reset): a payment the
 * provider declined after it was created is a decision, whose run still hands a late success
 * on; only a donation refused before it had a payment is a refusal.
 */
describe('startPayment on a donation ended before this run', () => {
  it('answers decided, not refused, for a payment the provider declined', async () => {
    // Seen as the simulator's case 297 under load: declined, reset, then paid. The run took
    // the PAID but, answered "refused", never handed it to a late payment.
    const activities = await ledgerActivities(() => snapshot('pay_declined_1', 'DECLINED', 10_000));
    try {
      const campaignId = await createCampaign(activities.db);
      const input = donationInput({ campaignId });
      const donations = new DonationRepository(activities.db);
      await donations.insert(input);
      await donations.markAwaitingPayment(input.donationId, 'pay_declined_1', {
        type: 'qr',
        value: 'qr-payload',
      });
      await donations.markFailed(input.donationId, 'FAILED', 'payment-declined');
      const donationActivities = createDonationActivities(activities.deps);
      await expect(donationActivities.startPayment(input)).resolves.toEqual({
        kind: 'decided',
        status: 'FAILED',
        providerReference: 'pay_declined_1',
        credited: false,
      });
    } finally {
      await activities.close();
    }
  });
});
