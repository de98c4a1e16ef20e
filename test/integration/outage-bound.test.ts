import { WorkflowFailedError } from '@temporalio/client';
import { runReconciliationNow } from '../../src/reconciliation/reconciliation-schedule';
import { donationWorkflowId } from '../../workflows/contracts';
import { effectsOf, waitForStatus, workflowResult } from '../support/donations';
import { rowOf } from '../support/money';
import { backdateDonation, donate } from '../support/reconciliation';
import { createCampaign, eventually, startStack } from '../support/stack';
import type { Stack } from '../support/stack';

/**
 * Attempts a step gets through an outage in this file: 1, 2 and 4 s apart, about 7 s in all,
 * well past the 0.5 s the edge waits before it answers PENDING, even on a loaded machine.
 */
const OUTAGE_ATTEMPTS = 4;

/**
 * A step retried a provider's or Postgres's outage for as long as it lasted: the donation sat in
 * that step where nobody looked (and, retried by workflow timers, its history grew toward
 * Temporal's limit). Now an outage gets OUTAGE_RETRY_ATTEMPTS, then the step fails for good:
 * before the payment exists the run fails (reconciliation hands the row back), after it the
 * donation ends in NEEDS_REVIEW. Without the bound neither test ends.
 */
describe('a provider outage longer than the steps are retried', () => {
  let stack: Stack;
  let campaignId: string;

  beforeAll(async () => {
    stack = await startStack({
      autoPayMs: -1,
      paymentTimeoutSeconds: 2,
      env: { OUTAGE_RETRY_ATTEMPTS: String(OUTAGE_ATTEMPTS), EARLY_RETURN_MS: '500' },
    });
    campaignId = await createCampaign(stack.db);
  });
  afterAll(() => stack.stop());

  test('a create refused throughout fails the run; a hand-back later charges once', async () => {
    // Every create answers 503 until the plan changes.
    const id = await donate(stack, campaignId, 31_000, { autoPayMs: -1, errorRate: 1 });
    const failed = await workflowResult(stack, id).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(WorkflowFailedError);
    expect(String((failed as WorkflowFailedError).cause?.message)).toContain('outage');
    expect(stack.simulator.chargeCount(`${id}:create`)).toBe(0);
    expect((await rowOf(stack, id)).status).toBe('PENDING');

    // The provider is back: reconciliation finds the open row whose run failed and hands it back.
    stack.simulator.plan(id, { autoPayMs: 100 });
    await backdateDonation(stack, id);
    const report = await runReconciliationNow(stack.temporal, stack.config.temporal.taskQueue);
    expect(report.stuckRestarted).toContainEqual(
      expect.objectContaining({ donationId: id, action: 'hand-back' }),
    );
    await waitForStatus(stack, id, 'CONFIRMED');
    expect(await effectsOf(stack, id)).toMatchObject({ donations: 1, charges: 1 });
  }, 90_000);

  test('a status API down at the deadline ends the donation in NEEDS_REVIEW', async () => {
    const id = await donate(stack, campaignId, 32_000, { autoPayMs: -1 });
    await eventually(async () => ((await rowOf(stack, id)).provider_reference ? true : undefined));
    // The payment exists; from now on every call about it answers 503, the deadline's read too.
    stack.simulator.plan(id, { autoPayMs: -1, errorRate: 1 });
    await expect(
      stack.temporal.workflow.getHandle(donationWorkflowId(id)).result(),
    ).resolves.toMatchObject({ status: 'NEEDS_REVIEW', credited: false });
    const row = await rowOf(stack, id);
    expect({ status: row.status, reason: row.failure_reason }).toEqual({
      status: 'NEEDS_REVIEW',
      reason: 'step-failed-for-good',
    });
  }, 90_000);
});
