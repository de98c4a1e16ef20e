import { proxyActivities, setHandler } from '@temporalio/workflow';
import type { ReversalActivities } from '../activities/reversal-activities';
import { paymentSyncSignal } from './contracts';
import type { PaymentRef, PaymentSyncResult } from './contracts';
import { moneyActivity } from './retry-policies';

const { followProviderTruth } = proxyActivities<ReversalActivities>(moneyActivity);

/**
 * Reads a payment's record at its provider and hands what the ledger lacks to the workflows
 * that post it (reversals, a late payment). A hint that comes while it reads makes it read
 * again, so no change reported meanwhile is missed.
 */
export async function paymentSyncWorkflow(ref: PaymentRef): Promise<PaymentSyncResult> {
  let asked = 1;
  setHandler(paymentSyncSignal, () => {
    asked += 1;
  });
  let followed = 0;
  for (let read = 0; read < asked;) {
    read = asked;
    followed += await followProviderTruth(ref);
  }
  return { followed };
}
