import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { ReconciliationActivities } from '../activities/reconciliation-activities';
import type { ReconciliationReport } from './contracts';
import { providerSweepActivity, reconciliationActivity } from './retry-policies';

const {
  repairCampaignTotals,
  handBackStuckDonations,
  redeliverInbox,
  purgeExpiredPersonalData,
  releaseKeptMethods,
  recordReconciliationRun,
} = proxyActivities<ReconciliationActivities>(reconciliationActivity);
const { sweepProviderTruth } = proxyActivities<ReconciliationActivities>(providerSweepActivity);

/**
 * One reconciliation pass, started by the worker's schedule (or `npm run ops -- reconcile`):
 * repair campaign totals that drifted from the ledger, hand stuck donations back to a workflow,
 * deliver webhooks nobody delivered, read the providers' records of money that can still move,
 * drop personal data past its retention (raw webhook bodies' payer data, donor details of
 * starts that never happened), release the cards pledges let go of at their provider, and
 * record what was done. See docs/operations.md.
 */
export async function reconciliationWorkflow(): Promise<ReconciliationReport> {
  const { runId, workflowId } = workflowInfo();
  const totals = await repairCampaignTotals(runId);
  const stuckRestarted = await handBackStuckDonations(runId);
  const inboxRedelivered = await redeliverInbox();
  // After the inbox: what was recorded is applied first, the providers' records then fill in.
  const providerSweep = await sweepProviderTruth();
  const purged = await purgeExpiredPersonalData();
  const keptMethods = await releaseKeptMethods();
  const report: ReconciliationReport = {
    runId,
    workflowId,
    ...totals,
    stuckRestarted,
    inboxRedelivered,
    providerSweep,
    ...purged,
    keptMethods,
  };
  await recordReconciliationRun(report);
  return report;
}
