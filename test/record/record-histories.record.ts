import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { deriveUuid } from '../../src/idempotency/idempotency-key';
import { runReconciliationNow } from '../../src/reconciliation/reconciliation-schedule';
import type { PaymentPlan } from '../../src/providers/simulator/simulator-knobs';
import {
  donationWorkflowId,
  latePaymentWorkflowId,
  pledgeFirstPeriodWorkflowId,
  pledgePeriodWorkflowId,
  pledgeScheduleId,
  refundRequestWorkflowId,
  reversalWorkflowId,
  WorkflowType,
} from '../../workflows/contracts';
import type { PledgePeriodWorkflow } from '../../workflows/contracts';
import { clientAScope, postDonation, waitForStatus } from '../support/donations';
import {
  CLIENT_SECRET,
  OPERATOR_SECRET,
  createCampaign,
  donationBody,
  eventually,
  startStack,
} from '../support/stack';

const historiesDir = path.resolve(__dirname, '../histories');

async function save(handle: WorkflowHandle, name: string): Promise<void> {
  await handle.result();
  writeFileSync(
    path.join(historiesDir, `${name}.json`),
    JSON.stringify(await handle.fetchHistory()),
  );
}

/**
 * `npm run histories:record`: runs every path of the workflows on the real stack and saves their
 * histories under test/histories, which the replay test replays against later code. Until the
 * first release a workflow change re-records them all (no `patched()`); after it, a change is
 * guarded by `patched()` and records a new set beside the old files under a new name prefix.
 */
describe('record workflow histories', () => {
  it('records the histories of every path', async () => {
    const stack = await startStack({ autoPayMs: 100, paymentTimeoutSeconds: 2 });
    try {
      const campaignId = await createCampaign(stack.db);
      const donate = async (name: string, plan: PaymentPlan) => {
        const key = `history-${name}-${Date.now()}`;
        const id = deriveUuid(clientAScope(key));
        stack.simulator.plan(id, plan);
        await postDonation(stack.apiUrl, key, donationBody(campaignId));
        await save(stack.temporal.workflow.getHandle(donationWorkflowId(id)), `donation-${name}`);
        return id;
      };
      const confirmed = await donate('confirmed', {});
      await donate('declined', { decline: true });
      await donate('expired', { autoPayMs: -1 });
      await donate('lost-webhook', { dropWebhooks: true });
      await donate('needs-review', { payAmount: 1 });
      await donate('processing-then-paid', { autoPayMs: 1_000, processingMs: 3_000 });

      const requestKey = `history-refund-${confirmed}`;
      await fetch(`${stack.apiUrl}/v1/donations/${confirmed}/refunds`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${OPERATOR_SECRET}`,
          'idempotency-key': requestKey,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ amount: 10_000, reason: 'recording' }),
      });
      await waitForStatus(stack, confirmed, 'PARTIALLY_REFUNDED');
      const refundId = (stack.simulator.paymentByReference(confirmed)?.refunds ?? [])[0]?.id ?? '';
      const requests = stack.temporal.workflow.list({
        query: `WorkflowType = '${WorkflowType.refundRequest}'`,
      });
      for await (const request of requests) {
        if (request.workflowId.startsWith(refundRequestWorkflowId(confirmed, ''))) {
          await save(stack.temporal.workflow.getHandle(request.workflowId), 'refund-request');
        }
      }
      await save(
        stack.temporal.workflow.getHandle(reversalWorkflowId(confirmed, 'refund', refundId)),
        'reversal-refund',
      );

      const disputed = await donate('for-dispute', {});
      const paymentId = stack.simulator.paymentByReference(disputed)?.id ?? '';
      const dispute = stack.simulator.openDispute(paymentId);
      await waitForStatus(stack, disputed, 'CHARGED_BACK');
      stack.simulator.closeDispute(dispute.id, 'won');
      await waitForStatus(stack, disputed, 'CONFIRMED');
      await save(
        stack.temporal.workflow.getHandle(reversalWorkflowId(disputed, 'dispute', dispute.id)),
        'reversal-dispute-won',
      );

      const late = await donate('expired-then-paid', { autoPayMs: -1 });
      stack.simulator.transition(stack.simulator.paymentByReference(late)?.id ?? '', 'settled');
      await eventually(async () => {
        const handle = stack.temporal.workflow.getHandle(latePaymentWorkflowId(late));
        return (await handle.describe().catch(() => undefined)) && handle;
      });
      await save(stack.temporal.workflow.getHandle(latePaymentWorkflowId(late)), 'late-payment');
    } finally {
      await stack.stop();
    }
  }, 180_000);

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

  it('records a pledge’s periods: one paid by its kept card, one after a decline', async () => {
    const stack = await startStack({ autoPayMs: 100, env: { PLEDGE_RETRY_DELAYS: '1s' } });
    try {
      const campaignId = await createCampaign(stack.db);
      const created = await fetch(`${stack.apiUrl}/v1/pledges`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${CLIENT_SECRET}`,
          'idempotency-key': `history-pledge-${Date.now()}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({
          ...donationBody(campaignId),
          paymentMethod: 'card',
          interval: 'monthly',
        }),
      });
      const { pledge } = (await created.json()) as { pledge: { id: string } };
      await save(
        stack.temporal.workflow.getHandle(pledgeFirstPeriodWorkflowId(pledge.id)),
        'pledge-period-first',
      );
      const kept = await eventually(async () => {
        const row = await stack.db
          .selectFrom('pledges')
          .select('saved_method')
          .where('id', '=', pledge.id)
          .executeTakeFirstOrThrow();
        return row.saved_method ?? undefined;
      });
      stack.simulator.queueSavedMethod(kept, ['insufficient_funds']);
      const next = new Date(Date.now() + 32 * 86_400_000);
      const handle = await stack.temporal.workflow.start<PledgePeriodWorkflow>(
        WorkflowType.pledgePeriod,
        {
          workflowId: `${pledgePeriodWorkflowId(pledge.id)}-history`,
          taskQueue: stack.config.temporal.taskQueue,
          args: [{ pledgeId: pledge.id, at: next.toISOString() }],
        },
      );
      await save(handle, 'pledge-period-retried');
      await stack.temporal.schedule.getHandle(pledgeScheduleId(pledge.id)).delete();
    } finally {
      await stack.stop();
    }
  }, 120_000);
});
