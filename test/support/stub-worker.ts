import { randomUUID } from 'node:crypto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { DonationActivities } from '../../activities/donation-activities';
import type { ReversalActivities } from '../../activities/reversal-activities';
import type { PaymentSnapshot, PaymentStatus } from '../../workflows/contracts';
import { testState } from './test-env';

/**
 * Workflow tests with stub activities, as temporalio/samples-typescript writes them: a worker on
 * a task queue of the test's own, the suite's prebuilt bundle, and plain functions for activities.
 * No Postgres, Redis or provider: each stub answers what the path under test needs.
 */
export type Activities = DonationActivities & ReversalActivities;
export type ActivityName = keyof Activities;

export interface Call {
  name: ActivityName;
  args: unknown[];
}

/** The suite's dev server, reached as the samples reach theirs. */
export function connectToDevServer(): Promise<TestWorkflowEnvironment> {
  return TestWorkflowEnvironment.createFromExistingServer({ address: testState().temporalAddress });
}

/** Wraps stubs so every call is recorded in order; local activities are recorded the same way. */
export function recorded(stubs: Partial<Activities>) {
  const calls: Call[] = [];
  const activities: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
  for (const [name, stub] of Object.entries(stubs)) {
    const fn = stub as (...args: unknown[]) => Promise<unknown>;
    activities[name] = async (...args: unknown[]) => {
      calls.push({ name: name as ActivityName, args });
      return fn(...args);
    };
  }
  return {
    activities,
    calls,
    /** Activity names in call order. */
    names: () => calls.map((call) => call.name),
    /** The arguments of each call of one activity. */
    argsOf: (name: ActivityName) => calls.filter((c) => c.name === name).map((c) => c.args),
    count: (name: ActivityName) => calls.filter((c) => c.name === name).length,
  };
}

export type Recorded = ReturnType<typeof recorded>;

/**
 * Runs `body` while a worker with these activities polls a fresh task queue, then shuts the
 * worker down (`runUntil`), whether the body passed or threw.
 */
export async function withWorker<T>(
  env: TestWorkflowEnvironment,
  activities: object,
  body: (taskQueue: string) => Promise<T>,
): Promise<T> {
  const taskQueue = `wf-test-${randomUUID()}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: { codePath: testState().workflowBundlePath },
    activities,
  });
  return worker.runUntil(body(taskQueue));
}

/** Polls until `check` returns something, for what a stub or a query shows a little later. */
export async function until<T>(check: () => T | undefined | Promise<T | undefined>, ms = 5_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Condition not met in ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A payment as the provider's status API would report it. */
export function snapshot(
  providerReference: string,
  status: PaymentStatus,
  amount: number,
  extra: Partial<PaymentSnapshot> = {},
): PaymentSnapshot {
  return {
    providerReference,
    status,
    amount,
    currency: 'IDR',
    refunds: [],
    disputes: [],
    ...extra,
  };
}
