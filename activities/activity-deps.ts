import { ApplicationFailure } from '@temporalio/activity';
import type { CampaignRepository } from '../src/campaigns/campaign-repository';
import type { DonorWallCache } from '../src/campaigns/donor-wall-cache';
import type { ProgressCache } from '../src/campaigns/progress-cache';
import type { DonationRepository } from '../src/donations/donation-repository';
import type { LedgerRepository } from '../src/ledger/ledger-repository';
import { ProviderRejected } from '../src/providers/http-json';
import type { PaymentProvider, ProviderRegistry } from '../src/providers/payment-provider';
import type { FollowUpWorkflows } from '../src/donations/follow-up-workflows';
import type { WorkerMetrics } from '../src/temporal/worker-metrics';
import { FailureType } from '../workflows/contracts';

/** What to do with a payment that succeeded after its donation was closed. */
export type LatePaymentPolicy =
  /** Credit it while the campaign still takes donations, refund it otherwise. */
  | 'credit'
  /** Always refund it. */
  | 'refund';

/** Everything the worker's activities are built from. */
export interface ActivityDeps {
  donations: DonationRepository;
  ledger: LedgerRepository;
  campaigns: CampaignRepository;
  providers: ProviderRegistry;
  progressCache: ProgressCache;
  wallCache: DonorWallCache;
  followUps: FollowUpWorkflows;
  latePaymentPolicy: LatePaymentPolicy;
  metrics: WorkerMetrics;
}

/** The named provider, or a final failure: no retry makes an unconfigured provider appear. */
export function providerOf(deps: Pick<ActivityDeps, 'providers'>, name: string): PaymentProvider {
  const found = deps.providers.get(name);
  if (!found) throw ApplicationFailure.nonRetryable(`No provider ${name}`, FailureType.Validation);
  return found;
}

/**
 * A provider's 4xx is final for this request, except that it refused our credentials: that is
 * our misconfiguration, and the activity keeps retrying (with backoff) until an operator fixes
 * the keys, rather than failing donors' payments for good.
 */
export function isFinalRejection(error: unknown): error is ProviderRejected {
  return error instanceof ProviderRejected && error.status !== 401 && error.status !== 403;
}

/**
 * Puts a campaign's new totals into the cache and drops its donor wall's pages (a donation
 * joined or left it); the TTLs bound staleness if Redis is away.
 */
export async function refreshProgress(
  deps: Pick<ActivityDeps, 'campaigns' | 'progressCache' | 'wallCache'>,
  campaignId: string,
): Promise<boolean> {
  const [progress, wall] = await Promise.allSettled([
    deps.campaigns.progress(campaignId).then(async (found) => {
      if (found) await deps.progressCache.refresh(found);
    }),
    deps.wallCache.invalidate(campaignId),
  ]);
  return progress.status === 'fulfilled' && wall.status === 'fulfilled';
}
