import { createReversalActivities } from '../../activities/reversal-activities';
import { logRequest } from '../../src/observability/log-redaction';
import { DonationRepository } from '../../src/donations/donation-repository';
import { LedgerRepository } from '../../src/ledger/ledger-repository';
import { ledgerActivities, ledgerState, seedDonation } from '../support/ledger-activities';
import { snapshot } from '../support/stub-worker';

/** Starting a late payment from a donation's run, and the request lines the API logs. */
describe('a late payment started by a closing run', () => {
  it('is not started for a donation credited since (a second could refund kept money)', async () => {
    const activities = await ledgerActivities(() => snapshot('pay_late_1', 'PAID', 10_000));
    const started: string[] = [];
    // The hand-off to Temporal, recorded: this test is about whether it happens.
    activities.deps.followUps.startLatePayment = async (input) => {
      started.push(input.donationId);
      return { workflowId: `late-${input.donationId}`, started: true };
    };
    try {
      const reversal = createReversalActivities(activities.deps);
      const late = (donationId: string, campaignId: string) =>
        reversal.startLatePayment({
          donationId,
          campaignId,
          provider: 'simulator',
          providerReference: 'pay_late_1',
          verifyWithProvider: true,
          event: {
            kind: 'payment',
            eventKey: 'evt-late-1',
            providerReference: 'pay_late_1',
            status: 'PAID',
            amount: 10_000,
            currency: 'IDR',
            occurredAt: new Date().toISOString(),
          },
          amount: 10_000,
          currency: 'IDR',
        });
      const credited = await seedDonation(activities.db, 10_000, 'CONFIRMED');
      const expired = await seedDonation(activities.db, 10_000, 'EXPIRED');
      await late(credited.donationId, credited.campaignId);
      await late(expired.donationId, expired.campaignId);
      expect(started).toEqual([expired.donationId]);
    } finally {
      await activities.close();
    }
  });
});

describe('a late confirm of a donation held by its late payment', () => {
  it("credits nothing: the hold is an operator's (simulator-va case 239 of seed 20261204)", async () => {
    const activities = await ledgerActivities(() => snapshot('pay_late_2', 'PAID', 10_000));
    try {
      const held = await seedDonation(activities.db, 10_000, 'EXPIRED');
      await new DonationRepository(activities.db).markLateForReview(
        held.donationId,
        'late payment to a closed campaign, not refundable by API',
      );
      const result = await new LedgerRepository(activities.db).confirm(held.donationId, {
        late: true,
      });
      expect(result).toMatchObject({ inserted: false, status: 'NEEDS_REVIEW' });
      expect(await ledgerState(activities.db, held.donationId, held.campaignId)).toEqual({
        entries: [],
        total: 0,
        status: 'NEEDS_REVIEW',
      });
      // Closed without money and not held: a late success is still credited.
      const expired = await seedDonation(activities.db, 10_000, 'EXPIRED');
      await expect(
        new LedgerRepository(activities.db).confirm(expired.donationId, { late: true }),
      ).resolves.toMatchObject({ inserted: true, status: 'CONFIRMED' });
    } finally {
      await activities.close();
    }
  });
});

describe('request log lines', () => {
  it("blank a receipt link's token", () => {
    const line = logRequest({
      method: 'GET',
      url: '/v1/receipts/GLG-2026-000001.pdf?token=abc&x=1',
    });
    expect(line.url).toBe('/v1/receipts/GLG-2026-000001.pdf?token=[redacted]&x=1');
  });
});
