import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { loadConfig } from '../../src/config/config';
import { tuningOptions } from '../../src/runtime/donation-worker';
import { createCalibrationActivities } from './activities';

/**
 * The calibration worker, a process of its own like galang's worker: `bench/spike.ts` starts it
 * with TEMPORAL_ADDRESS and CALIBRATION_TASK_QUEUE and stops it with SIGTERM. Sized with the same
 * WORKER_* settings as galang's worker, so the two differ only in the workflow they run.
 */
async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const connection = await NativeConnection.connect({
    address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233',
  });
  const worker = await Worker.create({
    connection,
    taskQueue: process.env.CALIBRATION_TASK_QUEUE ?? 'calibration',
    workflowsPath: require.resolve('./workflow'),
    activities: createCalibrationActivities(),
    ...tuningOptions(loadConfig().worker),
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      worker.shutdown();
    });
  }
  const running = worker.run();
  process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
  await running;
  await connection.close();
}

void main();
