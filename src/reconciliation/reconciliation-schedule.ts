import { randomUUID } from 'node:crypto';
import { ScheduleAlreadyRunning, ScheduleNotFoundError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import { WorkflowType } from '../../workflows/contracts';
import type { ReconciliationReport, ReconciliationWorkflow } from '../../workflows/contracts';

export interface ReconciliationScheduleOptions {
  taskQueue: string;
  /** 0 creates no schedule (an existing one is left as it is). */
  intervalSeconds: number;
}

export type ScheduleOutcome = 'created' | 'updated' | 'unchanged' | 'disabled';

/** One schedule per task queue: deployments (and test files) sharing a server stay apart. */
export function reconciliationScheduleId(taskQueue: string): string {
  return `galang-reconciliation:${taskQueue}`;
}

/**
 * Creates the schedule that runs reconciliation every `intervalSeconds`, once: every worker
 * calls this at start, and a schedule that exists is left alone unless its interval changed.
 * Overlapping runs are skipped, and a run missed while Temporal was down is not caught up
 * (the next one does the same work).
 */
export async function ensureReconciliationSchedule(
  client: Client,
  options: ReconciliationScheduleOptions,
): Promise<ScheduleOutcome> {
  if (options.intervalSeconds === 0) return 'disabled';
  const scheduleId = reconciliationScheduleId(options.taskQueue);
  const every = options.intervalSeconds * 1000;
  try {
    await client.schedule.create<ReconciliationWorkflow>({
      scheduleId,
      spec: { intervals: [{ every }] },
      action: {
        type: 'startWorkflow',
        workflowType: WorkflowType.reconciliation,
        workflowId: `reconciliation:${options.taskQueue}`,
        taskQueue: options.taskQueue,
        args: [],
      },
      policies: { overlap: 'SKIP', catchupWindow: '1 minute' },
    });
    return 'created';
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
  }
  const handle = client.schedule.getHandle(scheduleId);
  const current = await handle.describe();
  const intervals = current.spec.intervals ?? [];
  if (intervals.length === 1 && intervals[0]?.every === every) return 'unchanged';
  await handle.update((previous) => ({ ...previous, spec: { intervals: [{ every }] } }));
  return 'updated';
}

/**
 * Runs reconciliation now and waits for its report: through the schedule when there is one
 * (so the run shows in its history, and an operator's run and a scheduled one can be told
 * apart only by time), else as a workflow of its own.
 */
export async function runReconciliationNow(
  client: Client,
  taskQueue: string,
  timeoutMs = 300_000,
): Promise<ReconciliationReport> {
  const scheduleId = reconciliationScheduleId(taskQueue);
  const schedule = client.schedule.getHandle(scheduleId);
  let seen: Set<string>;
  try {
    seen = new Set((await schedule.describe()).info.recentActions.map(actionRunId));
  } catch (error) {
    if (!(error instanceof ScheduleNotFoundError)) throw error;
    return client.workflow.execute<ReconciliationWorkflow>(WorkflowType.reconciliation, {
      workflowId: `reconciliation-manual:${taskQueue}:${randomUUID()}`,
      taskQueue,
      args: [],
    });
  }
  await schedule.trigger();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const started = (await schedule.describe()).info.recentActions.find(
      (action) => !seen.has(actionRunId(action)),
    );
    if (started) {
      const { workflowId, firstExecutionRunId } = started.action.workflow;
      return client.workflow
        .getHandle<ReconciliationWorkflow>(workflowId, firstExecutionRunId)
        .result();
    }
    if (Date.now() > deadline) throw new Error(`Schedule ${scheduleId} started no run in time`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function actionRunId(action: { action: { workflow: { firstExecutionRunId: string } } }): string {
  return action.action.workflow.firstExecutionRunId;
}
