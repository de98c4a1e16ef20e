import { log } from '@temporalio/activity';
import type { Reconciler } from '../src/reconciliation/reconciler';
import type { ReconciliationReport, StuckDecision, TotalsResult } from '../workflows/contracts';

export interface ReconciliationActivityDeps {
  reconciler: Reconciler;
}

/**
 * The reconciliation workflow's side effects. Each is safe to re-run: a repair is conditional
 * on the row it read, a hand-back starts a workflow only where none runs, a redelivery is
 * ignored by a workflow that has the event, and a run is recorded once by its run ID.
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

    async recordReconciliationRun(report: ReconciliationReport): Promise<void> {
      await deps.reconciler.recordRun(report);
    },
  };
}

export type ReconciliationActivities = ReturnType<typeof createReconciliationActivities>;
