import type { ProviderRegistry } from '../providers/payment-provider';
import type { KeptMethodsReleased } from '../../workflows/contracts';
import type { KeptMethodReleases } from './kept-method-releases';

/**
 * Tries per method, one a reconciliation run: 100 minutes at the default interval; a longer
 * outage leaves the method to an operator (docs/operations.md says how to retry it).
 */
export const MAX_RELEASE_ATTEMPTS = 20;
/** Methods released per run; more wait for the next. */
const RELEASES_PER_RUN = 200;
/**
 * No release starts later than this into a run: a provider that hangs each call for its 10 s
 * timeout would otherwise keep the activity past its 5 minutes and fail the whole run.
 */
export const RELEASE_BUDGET_MS = 2 * 60_000;

export interface ReleaseLog {
  warn(details: Record<string, unknown>, message: string): void;
}

/**
 * Releases at their provider the cards pledges let go of (docs/pledges.md), a run at a time.
 * Each release is idempotent at the provider (one released already counts as released), so a
 * run retried after a crash between the provider's answer and the row's update repeats nothing.
 */
export class KeptMethodReleaser {
  constructor(
    private readonly releases: KeptMethodReleases,
    private readonly providers: ProviderRegistry,
    /** The clock the budget is read from (tests move it). */
    private readonly now: () => number = Date.now,
  ) {}

  async releaseDue(log: ReleaseLog): Promise<KeptMethodsReleased> {
    const result: KeptMethodsReleased = { released: 0, failed: 0, leftForOperator: 0 };
    const until = this.now() + RELEASE_BUDGET_MS;
    for (const release of await this.releases.due(MAX_RELEASE_ATTEMPTS, RELEASES_PER_RUN)) {
      // What is left waits for the next run, no attempt counted.
      if (this.now() > until) break;
      const provider = this.providers.get(release.provider);
      try {
        if (!provider?.releaseMethod) {
          throw new Error(`provider ${release.provider} cannot release kept methods here`);
        }
        await provider.releaseMethod(release.savedMethod);
        if (await this.releases.released(release)) result.released++;
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        const attempts = await this.releases.failed(release, reason);
        const { provider: name, pledgeId } = release;
        if (attempts >= MAX_RELEASE_ATTEMPTS) {
          result.leftForOperator++;
          log.warn(
            { provider: name, pledgeId, attempts, reason },
            'kept card left for an operator',
          );
        } else {
          result.failed++;
          log.warn({ provider: name, pledgeId, attempts, reason }, 'kept card not released yet');
        }
      }
    }
    return result;
  }
}
