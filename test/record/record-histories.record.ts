import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { deriveUuid } from '../../src/idempotency/idempotency-key';
import { donationWorkflowId } from '../../src/donations/donation';
import { runReconciliationNow } from '../../src/reconciliation/reconciliation-schedule';
import { reversalWorkflowId } from '../../workflows/reversal-workflow';
import { clientAScope, postDonation, waitForStatus } from '../support/donations';
import { OPERATOR_SECRET, createCampaign, donationBody, startStack } from '../support/stack';
import type { PaymentPlan } from '../../src/providers/simulator/simulator-server';

const historiesDir = path.resolve(__dirname, '../histories');

/**
 * `npm run histories:record`: runs every path of the workflows on the real stack and saves their
 * histories under test/histories, which the replay test replays against later code. When a
 * change is guarded by `patched()`, record a new set beside the old files and keep both.
 */
describe('record workflow histories', () => {
  it('records histories of every path', async () => {
    const stack = await startStack({ autoPayMs: 100, paymentTimeoutSeconds: 2 });
    try {
      const campaignId = await createCampaign(stack.db);
      const run = async (name: string, plan: PaymentPlan) => {
        const key = `history-${name}-${Date.now()}`;
        const id = deriveUuid(clientAScope(key));
        stack.simulator.plan(id, plan);
        await postDonation(stack.apiUrl, key, donationBody(campaignId));
        const handle = stack.temporal.workflow.getHandle(donationWorkflowId(id));
        await handle.result();
        const file = path.join(historiesDir, `donation-${name}.json`);
        writeFileSync(file, JSON.stringify(await handle.fetchHistory()));
        return id;
      };
      const confirmed = await run('confirmed', {});
      await run('declined', { decline: true });
      await run('expired', { autoPayMs: -1 });
      await run('lost-webhook', { dropWebhooks: true });
      await run('needs-review', { payAmount: 1 });

      await fetch(`${stack.apiUrl}/v1/donations/${confirmed}/refunds`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${OPERATOR_SECRET}`,
          'idempotency-key': `history-refund-${confirmed}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ reason: 'recording' }),
      });
      await waitForStatus(stack, confirmed, 'REFUNDED');
      const reversal = stack.temporal.workflow.getHandle(reversalWorkflowId('REFUND', confirmed));
      await reversal.result();
      writeFileSync(
        path.join(historiesDir, 'reversal-refund.json'),
        JSON.stringify(await reversal.fetchHistory()),
      );
    } finally {
      await stack.stop();
    }
  }, 120_000);

  // Recorded on its own (`npm run histories:record -- -t reconciliation`) so that adding it did
  // not re-record, and so lose, the donation histories of earlier code.
  it('records a reconciliation run', async () => {
    const stack = await startStack({ autoPayMs: -1 });
    try {
      const report = await runReconciliationNow(stack.temporal, stack.config.temporal.taskQueue);
      const handle = stack.temporal.workflow.getHandle(report.workflowId, report.runId);
      writeFileSync(
        path.join(historiesDir, 'reconciliation-run.json'),
        JSON.stringify(await handle.fetchHistory()),
      );
    } finally {
      await stack.stop();
    }
  }, 120_000);
});
