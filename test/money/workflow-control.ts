import { randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { donationWorkflowId, isOpen } from '../../workflows/contracts';
import type { Stack } from '../support/stack';

const EventType = temporal.api.enums.v1.EventType;

/**
 * Resets the donation's latest run to its first or last completed workflow task, as the ops
 * CLI's `reset --to first-task|last-task` does. Says what it did (a refusal by the server is
 * the operator's problem, not the money's: it is logged, not failed).
 */
export async function resetDonationWorkflow(
  stack: Stack,
  donationId: string,
  to: 'first-task' | 'last-task',
): Promise<string> {
  return resetWorkflow(stack, donationWorkflowId(donationId), to);
}

/** Resets a workflow's latest run to its first or last completed workflow task. */
export async function resetWorkflow(
  stack: Stack,
  workflowId: string,
  to: 'first-task' | 'last-task',
): Promise<string> {
  const handle = stack.temporal.workflow.getHandle(workflowId);
  const { runId } = await handle.describe();
  const events = (await handle.fetchHistory()).events ?? [];
  const tasks = events.filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
  const point = to === 'first-task' ? tasks[0] : tasks.at(-1);
  if (!point?.eventId) return `no completed workflow task to reset to yet`;
  try {
    const reset = await stack.temporal.workflowService.resetWorkflowExecution({
      namespace: stack.config.temporal.namespace,
      workflowExecution: { workflowId, runId },
      reason: 'money model: operator reset',
      workflowTaskFinishEventId: point.eventId,
      requestId: randomUUID(),
    });
    return `reset run ${runId} to event ${String(point.eventId)}: new run ${reset.runId}`;
  } catch (error) {
    return `reset refused: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** Waits until the donation row leaves the open statuses (the deadline or horizon decided it). */
export async function waitForStatusChange(
  stack: Stack,
  donationId: string,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await statusOf(stack, donationId);
    if (status !== undefined && !isOpen(status)) return;
    if (Date.now() > deadline) throw new Error(`donation still ${status ?? 'missing'}`);
    await sleep(200);
  }
}

/**
 * Fails the case plainly when the donation closed before a step the history puts inside the
 * settle horizon: a stalled machine, not galang, missed the window the model assumes.
 */
export async function assertHorizonOpen(
  stack: Stack,
  donationId: string,
  horizonSeconds: number,
): Promise<void> {
  const status = await statusOf(stack, donationId);
  if (status !== undefined && !isOpen(status)) {
    throw new Error(
      `the ${horizonSeconds} s settle horizon passed before this step (donation ${status}): ` +
        'the machine stalled, so this run cannot follow the history',
    );
  }
}

/**
 * Waits until the donation workflow's current run has fired its deadline timer, and a moment
 * more for the status read and the cancel that follow it.
 */
export async function waitForDeadlineTimer(
  stack: Stack,
  donationId: string,
  timeoutMs: number,
): Promise<void> {
  const handle = stack.temporal.workflow.getHandle(donationWorkflowId(donationId));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = (await handle.fetchHistory()).events ?? [];
    if (events.some((e) => e.eventType === EventType.EVENT_TYPE_TIMER_FIRED)) break;
    if (events.some((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED)) {
      return;
    }
    if (Date.now() > deadline) throw new Error('the deadline timer never fired');
    await sleep(250);
  }
  await sleep(1_500);
}

async function statusOf(stack: Stack, donationId: string): Promise<string | undefined> {
  const row = await stack.db
    .selectFrom('donations')
    .select('status')
    .where('id', '=', donationId)
    .executeTakeFirst();
  return row?.status;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
