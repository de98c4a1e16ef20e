import type { EnvReader } from './env-reader';

/** What a worker process polls: the donations' task queue, the receipts' (beside it), or both. */
export type WorkerQueue = 'donations' | 'receipts';
export const WORKER_QUEUES: readonly WorkerQueue[] = ['donations', 'receipts'];

/** The worker processes `npm start` runs, and each one's slots and pollers. */
export interface WorkerTuning {
  readonly processes: number;
  /**
   * The task queues this worker process polls: both by default (compose, a single node);
   * `npm start` runs receipts in a process of their own at a lower CPU priority instead, so a
   * rush's donations are answered and credited first and their receipts mailed after.
   */
  readonly taskQueues: readonly WorkerQueue[];
  readonly maxCachedWorkflows: number;
  readonly maxConcurrentWorkflowTasks: number;
  readonly maxConcurrentActivities: number;
  readonly maxConcurrentLocalActivities: number;
  readonly workflowPollers: number;
  readonly activityPollers: number;
}

/** WORKER_*: processes, task queues, slots, pollers and cache (docs/operations.md sizes them). */
export function readWorker(reader: EnvReader, problems: string[]): WorkerTuning {
  const queues = reader.list('WORKER_TASK_QUEUES', WORKER_QUEUES.join(','));
  const unknown = queues.filter((queue) => !(WORKER_QUEUES as readonly string[]).includes(queue));
  if (unknown.length > 0 || queues.length === 0) {
    problems.push(
      `WORKER_TASK_QUEUES must list one or both of ${WORKER_QUEUES.join(', ')}, got "${queues.join(',')}"`,
    );
  }
  return {
    processes: reader.integer('WORKER_PROCESSES', 1, 0, 64),
    taskQueues: WORKER_QUEUES.filter((queue) => queues.includes(queue)),
    maxCachedWorkflows: reader.integer('WORKER_MAX_CACHED_WORKFLOWS', 2_000, 0),
    maxConcurrentWorkflowTasks: reader.integer('WORKER_MAX_CONCURRENT_WORKFLOW_TASKS', 100, 2),
    maxConcurrentActivities: reader.integer('WORKER_MAX_CONCURRENT_ACTIVITIES', 200, 1),
    maxConcurrentLocalActivities: reader.integer('WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES', 200, 1),
    workflowPollers: reader.integer('WORKER_WORKFLOW_POLLERS', 10, 2),
    activityPollers: reader.integer('WORKER_ACTIVITY_POLLERS', 10, 1),
  };
}
