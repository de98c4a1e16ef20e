import { randomUUID } from 'node:crypto';
import { ScheduleNotFoundError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import { WorkflowType } from '../../workflows/contracts';
import type { ReconciliationReport, ReconciliationWorkflow } from '../../workflows/contracts';
import { ensureIntervalSchedule } from '../temporal/interval-schedule';
import type { ScheduleOutcome } from '../temporal/interval-schedule';

export interface ReconciliationScheduleOptions {
  taskQueue: string;
  /** 0 creates no schedule (an existing one is left as it is). */
  intervalSeconds: number;
}

/** One schedule per task queue: deployments (and test files) sharing a server stay apart. */
export function reconciliationScheduleId(taskQueue: string): string {
  return `galang-reconciliation:${taskQueue}`;
}

/** The schedule that runs reconciliation every `intervalSeconds` (0: none). */
export async function ensureReconciliationSchedule(
  client: Client,
  options: ReconciliationScheduleOptions,
): Promise<ScheduleOutcome> {
  return ensureIntervalSchedule(client, {
    scheduleId: reconciliationScheduleId(options.taskQueue),
    workflowType: WorkflowType.reconciliation,
    workflowId: `reconciliation:${options.taskQueue}`,
    ...options,
  });
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
