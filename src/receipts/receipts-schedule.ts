import type { Client } from '@temporalio/client';
import { receiptsWorkflowId, WorkflowType } from '../../workflows/contracts';
import { ensureIntervalSchedule } from '../temporal/interval-schedule';
import { receiptsTaskQueue } from './receipt-workflows';
import type { ScheduleOutcome } from '../temporal/interval-schedule';

/** The schedule of one organization's numbering runs on a task queue. */
export function receiptsScheduleId(prefix: string, taskQueue: string): string {
  return `galang-receipts:${prefix}:${taskQueue}`;
}

/**
 * Numbers confirmed donations every `intervalSeconds`: a schedule that never overlaps two runs
 * is the organization's single writer, off the confirmation's path (no shared row to lock).
 * Named after the donations' task queue; its runs go to the receipts' one beside it.
 */
export function ensureReceiptsSchedule(
  client: Client,
  options: { prefix: string; taskQueue: string; intervalSeconds: number },
): Promise<ScheduleOutcome> {
  return ensureIntervalSchedule(client, {
    scheduleId: receiptsScheduleId(options.prefix, options.taskQueue),
    workflowType: WorkflowType.receipts,
    workflowId: receiptsWorkflowId(options.prefix, options.taskQueue),
    taskQueue: receiptsTaskQueue(options.taskQueue),
    intervalSeconds: options.intervalSeconds,
  });
}
