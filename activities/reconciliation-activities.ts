import { Context, log } from '@temporalio/activity';
import type { KeptMethodReleaser } from '../src/pledges/kept-method-releaser';
import type { Reconciler } from '../src/reconciliation/reconciler';
import type {
  KeptMethodsReleased,
  PersonalDataPurged,
  ProviderSweepResult,
  ReconciliationReport,
  StuckDecision,
  TotalsResult,
} from '../workflows/contracts';

export interface ReconciliationActivityDeps {
  reconciler: Reconciler;
  keptMethods: KeptMethodReleaser;
}

/**
 * The reconciliation workflow's side effects. Each is safe to re-run: a repair is conditional
 * on the row it read, a hand-back starts a workflow only where none runs, a redelivery is
 * ignored by a workflow that has the event, a release is idempotent at the provider, and a run
 * is recorded once by its run ID.
 */
export function createReconciliationActivities(deps: ReconciliationActivityDeps) {
  return {
    async repairCampaignTotals(runId: string): Promise<TotalsResult> {
      const result = await deps.reconciler.repairTotals(runId);
      for (const repair of result.repaired) log.warn('campaign total repaired', { ...repair });
      return result;
    },

    async handBackStuckDonations(runId: string): Promise<StuckDecision[]> {
      const handedBack = await deps.reconciler.handBackStuck(runId);
      for (const decision of handedBack) log.warn('stuck donation handed back', { ...decision });
      return handedBack;
    },

    async redeliverInbox(): Promise<number> {
      return deps.reconciler.redeliverInbox({
        warn: (details, message) => {
          log.warn(message, { ...details });
        },
      });
    },

    /** Heartbeats its cursor after each page, so a retried attempt resumes where it stopped. */
    async sweepProviderTruth(): Promise<ProviderSweepResult> {
      const context = Context.current();
      const resumeAfter = context.info.heartbeatDetails as string | undefined;
      const result = await deps.reconciler.sweepProviders(
        resumeAfter,
        (cursor) => {
          context.heartbeat(cursor);
        },
        {
          warn: (details, message) => {
            log.warn(message, { ...details });
          },
        },
      );
      const meter = context.metricMeter;
      meter
        .createCounter(
          'galang_reconciliation_provider_followed',
          undefined,
          'Provider records followed into the ledger by reconciliation',
        )
        .add(result.followed);
      meter
        .createCounter(
          'galang_reconciliation_provider_read_failures',
          undefined,
          'Provider records reconciliation could not read',
        )
        .add(result.failed);
      if (result.followed > 0)
        log.warn('provider sweep followed what the ledger lacked', { ...result });
      return result;
    },

    /** Purges page by page; a retried attempt finds the purged rows gone from its index. */
    async purgeExpiredPersonalData(): Promise<PersonalDataPurged> {
      const purged = await deps.reconciler.purgeExpiredPersonalData();
      if (purged.bodiesPurged > 0 || purged.donorDetailsPurged > 0) {
        log.info('personal data past its retention purged', { ...purged });
      }
      return purged;
    },

    /** Releases the kept cards pledges let go of; each release is idempotent at its provider. */
    async releaseKeptMethods(): Promise<KeptMethodsReleased> {
      return deps.keptMethods.releaseDue({
        warn: (details, message) => {
          log.warn(message, { ...details });
        },
      });
    },

    async recordReconciliationRun(report: ReconciliationReport): Promise<void> {
      await deps.reconciler.recordRun(report);
    },
  };
}

export type ReconciliationActivities = ReturnType<typeof createReconciliationActivities>;
