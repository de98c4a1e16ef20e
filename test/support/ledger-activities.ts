import { noopMetricMeter } from '@temporalio/common';
import { Redis } from 'ioredis';
import { createDonationActivities } from '../../activities/donation-activities';
import { createReversalActivities } from '../../activities/reversal-activities';
import type { ActivityDeps } from '../../activities/activity-deps';
import { CampaignRepository } from '../../src/campaigns/campaign-repository';
import { DonorWallCache } from '../../src/campaigns/donor-wall-cache';
import { ProgressCache } from '../../src/campaigns/progress-cache';
import { createDatabase } from '../../src/db/database';
import type { Db } from '../../src/db/database';
import { DonationRepository } from '../../src/donations/donation-repository';
import { LedgerRepository } from '../../src/ledger/ledger-repository';
import type { PaymentProvider, RefundRequest } from '../../src/providers/payment-provider';
import type { FollowUpWorkflows } from '../../src/donations/follow-up-workflows';
import { createWorkerMetrics } from '../../src/temporal/worker-metrics';
import type { FinalFailureStatus, PaymentSnapshot } from '../../workflows/contracts';
import { donationInput } from './donation-stubs';
import { createCampaign } from './stack';
import { recorded } from './stub-worker';
import { testState } from './test-env';

/**
 * The worker's real activities on the test Postgres (and Redis), for workflow tests whose claim
 * is about the ledger. Only the provider's status read is scripted; the hand-offs to other
 * workflows (late payment, reversal) answer an id and are recorded, and a refund's reversal
 * ends as `reversals.end` says.
 */
export async function ledgerActivities(read: () => PaymentSnapshot) {
  const state = testState();
  const db = createDatabase({ connectionString: state.databaseUrl, max: 2 });
  const redis = new Redis(state.redisUrl, { keyPrefix: state.redisKeyPrefix });
  const refunds: RefundRequest[] = [];
  const provider: Pick<PaymentProvider, 'name' | 'fetchPayment' | 'refundable' | 'refund'> = {
    name: 'simulator',
    fetchPayment: async () => read(),
    refundable: () => true,
    refund: async (request) => {
      refunds.push(request);
      return { refundId: `re_${refunds.length}`, status: 'PENDING', amount: request.amount };
    },
  };
  const reversals: { end: FollowUpWorkflows['reversalOutcome'] } = {
    end: async () => 'no-money-moved',
  };
  const handOffs: Pick<
    FollowUpWorkflows,
    'startLatePayment' | 'followReversal' | 'reversalOutcome'
  > = {
    startLatePayment: async (input) => ({ workflowId: `late-${input.donationId}`, started: true }),
    followReversal: async (ref) => `reversal-${ref.donationId}`,
    reversalOutcome: (donationId, refundId) => reversals.end(donationId, refundId),
  };
  const deps: ActivityDeps = {
    donations: new DonationRepository(db),
    ledger: new LedgerRepository(db),
    campaigns: new CampaignRepository(db),
    providers: new Map([['simulator', provider as PaymentProvider]]),
    progressCache: new ProgressCache(redis),
    wallCache: new DonorWallCache(redis),
    followUps: handOffs as FollowUpWorkflows,
    latePaymentPolicy: 'credit',
    metrics: createWorkerMetrics(noopMetricMeter),
  };
  const stubs = recorded({ ...createDonationActivities(deps), ...createReversalActivities(deps) });
  return {
    db,
    deps,
    /** The refunds asked of the provider, in order. */
    refunds,
    /** How a refund's reversal workflow ends (read by a late payment); set by the test. */
    reversals,
    ...stubs,
    close: async () => {
      redis.disconnect();
      await db.destroy();
    },
  };
}

/** A donation of `amount` IDR on a campaign of its own, credited or closed without money. */
export async function seedDonation(
  db: Db,
  amount: number,
  ending: 'CONFIRMED' | FinalFailureStatus,
  campaign: { endsAt?: Date } = {},
): Promise<{ donationId: string; campaignId: string }> {
  const campaignId = await createCampaign(db, campaign);
  const input = donationInput({ campaignId, amount });
  const donations = new DonationRepository(db);
  await donations.insert(input);
  if (ending === 'CONFIRMED') await new LedgerRepository(db).confirm(input.donationId);
  else await donations.markFailed(input.donationId, ending, 'no-payment-before-deadline');
  return { donationId: input.donationId, campaignId };
}

/** The donation's ledger entries, oldest first, and its campaign's confirmed total. */
export async function ledgerState(db: Db, donationId: string, campaignId: string) {
  const entries = await db
    .selectFrom('donation_ledger')
    .select(['entry_type', 'external_ref', 'amount'])
    .where('donation_id', '=', donationId)
    .orderBy('id')
    .execute();
  const total = await db
    .selectFrom('campaign_totals')
    .select('confirmed_amount')
    .where('campaign_id', '=', campaignId)
    .executeTakeFirst();
  const row = await new DonationRepository(db).findById(donationId);
  return { entries, total: total?.confirmed_amount ?? 0, status: row?.status };
}
