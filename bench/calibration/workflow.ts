import {
  allHandlersFinished,
  condition,
  defineUpdate,
  proxyLocalActivities,
  setHandler,
} from '@temporalio/workflow';
import type { CalibrationActivities } from './activities';

/**
 * The yardstick of `bench:spike`: the least a donation-shaped workflow can cost on this server.
 * Started with update-with-start like a donation; the update answers once two local
 * activities (the shape of "record, then create the payment") have run.
 */
export const doneUpdate = defineUpdate<string>('done');

const { first, second } = proxyLocalActivities<CalibrationActivities>({
  startToCloseTimeout: '10 seconds',
});

export async function calibrationWorkflow(): Promise<string> {
  const state: { result?: string } = {};
  setHandler(doneUpdate, async () => {
    await condition(() => state.result !== undefined);
    return state.result ?? '';
  });
  state.result = await second(await first());
  await condition(allHandlersFinished);
  return state.result;
}
