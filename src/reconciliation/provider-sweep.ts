import type { DonationRepository } from '../donations/donation-repository';
import type { ProviderRegistry } from '../providers/payment-provider';
import { verifiesWithProvider } from '../providers/provider-verification';
import type { ProviderSweepResult } from '../../workflows/contracts';
import { followProviderTruth } from './provider-truth';
import type { ProviderTruthDeps } from './provider-truth';

export interface ProviderSweepDeps extends ProviderTruthDeps {
  donations: Pick<DonationRepository, 'findMoneyThatCanMove'>;
  providers: ProviderRegistry;
  /** How far back money can still move: the providers' longest dispute window. */
  windowDays: number;
}

const PAGE = 100;

/**
 * Reconciliation against the providers' truth: every donation whose money can still move has
 * its provider record read, and what the ledger lacks is handed to the same late-payment and
 * reversal workflows a webhook would reach, so a lost notification is repaired within one
 * sweep. Pages by id; `onPage` receives the cursor, so a retried attempt resumes after it.
 * Reads go one at a time, which keeps within any provider's rate limit.
 */
export async function sweepProviderTruth(
  deps: ProviderSweepDeps,
  resumeAfter: string | undefined,
  onPage: (cursor: string) => void,
  warn: (details: object, message: string) => void,
): Promise<ProviderSweepResult> {
  const result: ProviderSweepResult = { checked: 0, followed: 0, failed: 0 };
  let cursor = resumeAfter;
  for (;;) {
    const page = await deps.donations.findMoneyThatCanMove(deps.windowDays, PAGE, cursor);
    for (const donation of page) {
      const provider = deps.providers.get(donation.provider);
      if (!provider || !donation.providerReference) continue;
      const ref = {
        donationId: donation.id,
        campaignId: donation.campaignId,
        provider: donation.provider,
        providerReference: donation.providerReference,
        verifyWithProvider: verifiesWithProvider(deps.providers, donation.provider),
      };
      result.checked += 1;
      try {
        result.followed += await followProviderTruth(deps, provider, ref, donation);
      } catch (error) {
        // One provider's bad minute must not stop the sweep: the next run reads it again.
        result.failed += 1;
        warn({ donationId: donation.id, err: error }, 'provider sweep could not read a payment');
      }
    }
    const last = page.at(-1);
    if (!last || page.length < PAGE) return result;
    cursor = last.id;
    onPage(cursor);
  }
}
