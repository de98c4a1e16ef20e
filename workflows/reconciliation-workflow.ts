import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { ReconciliationActivities } from '../activities';
import type { ReconciliationReport } from '../src/reconciliation/reconciler';

/** A failed run is not retried for long: the schedule starts the next one in a few minutes. */
const { repairCampaignTotals, handBackStuckDonations, redeliverInbox, recordReconciliationRun } =
  proxyActivities<ReconciliationActivities>({
    startToCloseTimeout: '5 minutes',
    retry: { initialInterval: '2 seconds', maximumInterval: '30 seconds', maximumAttempts: 5 },
  });

/**
 * One reconciliation pass, started by the worker's schedule (or `npm run ops -- reconcile`):
 * repair campaign totals that drifted from the ledger, hand stuck donations back to a workflow,
 * deliver webhooks nobody delivered, and record what was done. See docs/operations.md.
 */
export async function reconciliationWorkflow(): Promise<ReconciliationReport> {
  const { runId, workflowId } = workflowInfo();
  const totals = await repairCampaignTotals(runId);
  const stuckRestarted = await handBackStuckDonations(runId);
  const inboxRedelivered = await redeliverInbox();
  const report: ReconciliationReport = {
    runId,
    workflowId,
    ...totals,
    stuckRestarted,
    inboxRedelivered,
  };
  await recordReconciliationRun(report);
  return report;
}
