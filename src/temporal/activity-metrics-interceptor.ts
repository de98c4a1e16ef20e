import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { activityTags } from './worker-metrics';
import type { WorkerMetrics } from './worker-metrics';

/**
 * Counts activity retries (every attempt after the first) on the worker's metrics endpoint, by
 * activity type. A climbing rate means a dependency (Postgres, a provider, Redis) keeps failing
 * under the activities, before any donation visibly stalls.
 */
export function activityMetricsInterceptor(metrics: WorkerMetrics): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        if (ctx.info.attempt > 1) metrics.activityRetries.add(1, activityTags(ctx.info));
        return next(input);
      },
    },
  });
}
