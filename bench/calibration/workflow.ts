import {
  allHandlersFinished,
  condition,
  defineSignal,
  defineUpdate,
  proxyLocalActivities,
  setHandler,
} from '@temporalio/workflow';
import type { CalibrationActivities } from './activities';

/**
 * The yardsticks of `bench:spike`: the least a donation-shaped workflow can cost on this server.
 * Started with update-with-start like a donation; the update answers once two local
 * activities (the shape of "record, then create the payment") have run.
 */
export const doneUpdate = defineUpdate<string>('done');
/** The provider's webhook, in the signalled yardstick. */
export const paidSignal = defineSignal('paid');

const { first, second, third } = proxyLocalActivities<CalibrationActivities>({
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

/**
 * A donation's whole shape with nothing of galang in it: the same start, then a wait for one
 * signal (the payment's webhook) and one more local activity (the credit) in a second workflow
 * task. What Temporal allows for this shape bounds what any donation pipeline can confirm here.
 */
export async function signalledCalibrationWorkflow(): Promise<string> {
  const state: { result?: string; paid: boolean } = { paid: false };
  setHandler(doneUpdate, async () => {
    await condition(() => state.result !== undefined);
    return state.result ?? '';
  });
  setHandler(paidSignal, () => {
    state.paid = true;
  });
  state.result = await second(await first());
  await condition(() => state.paid);
  const credited = await third(state.result);
  await condition(allHandlersFinished);
  return credited;
}
