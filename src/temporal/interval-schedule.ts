import { ScheduleAlreadyRunning } from '@temporalio/client';
import type { Client } from '@temporalio/client';

export interface IntervalSchedule {
  scheduleId: string;
  workflowType: string;
  workflowId: string;
  taskQueue: string;
  /** 0 creates no schedule (an existing one is left as it is). */
  intervalSeconds: number;
}

export type ScheduleOutcome = 'created' | 'updated' | 'unchanged' | 'disabled';

/**
 * Creates a schedule that starts a workflow (with no arguments) every `intervalSeconds`, once:
 * every worker calls this at start, and a schedule that exists is left alone unless its
 * interval or its workflows' task queue changed. Overlapping runs are skipped, and a run missed
 * while Temporal was down is not caught up (the next one does the same work).
 */
export async function ensureIntervalSchedule(
  client: Client,
  schedule: IntervalSchedule,
): Promise<ScheduleOutcome> {
  if (schedule.intervalSeconds === 0) return 'disabled';
  const every = schedule.intervalSeconds * 1000;
  try {
    await client.schedule.create({
      scheduleId: schedule.scheduleId,
      spec: { intervals: [{ every }] },
      action: {
        type: 'startWorkflow',
        workflowType: schedule.workflowType,
        workflowId: schedule.workflowId,
        taskQueue: schedule.taskQueue,
        args: [],
      },
      policies: { overlap: 'SKIP', catchupWindow: '1 minute' },
    });
    return 'created';
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
  }
  const handle = client.schedule.getHandle(schedule.scheduleId);
  const current = await handle.describe();
  const intervals = current.spec.intervals ?? [];
  const sameInterval = intervals.length === 1 && intervals[0]?.every === every;
  if (sameInterval && current.action.taskQueue === schedule.taskQueue) return 'unchanged';
  await handle.update((previous) => ({
    ...previous,
    spec: { intervals: [{ every }] },
    action: { ...previous.action, taskQueue: schedule.taskQueue },
  }));
  return 'updated';
}
