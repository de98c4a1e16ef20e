import { randomUUID } from 'node:crypto';
import { Client, Connection, WithStartWorkflowOperation } from '@temporalio/client';
import type { WorkflowHandle } from '@temporalio/client';
import {
  calibrationWorkflow,
  doneUpdate,
  paidSignal,
  signalledCalibrationWorkflow,
} from './calibration/workflow';
import { percentiles } from './measure';
import { SPIKE_CLIENT } from './spike-stack';

export interface CalibrationResult {
  inFlight: number;
  seconds: number;
  completed: number;
  perSecond: number;
  /** Signalled shape only: workflows completed per second, up to the last completion. */
  completedPerSecond?: number;
  p50: number;
  p99: number;
  errors: number;
}

/** Which yardstick: one workflow task, or a donation's two (start, then a signal). */
export type CalibrationShape = 'start' | 'signalled';

/**
 * What Temporal allows on this server: `inFlight` callers in a closed loop, each starting the
 * minimal workflow with update-with-start and waiting for its update, for `seconds`. With the
 * signalled shape each caller then signals the workflow (the webhook) and goes on; the level
 * ends when every workflow it started has completed.
 */
export async function calibrate(
  address: string,
  taskQueue: string,
  inFlight: number,
  seconds: number,
  shape: CalibrationShape = 'start',
): Promise<CalibrationResult> {
  const connection = await Connection.connect({ address });
  const client = new Client({ connection });
  const samples: number[] = [];
  const started: WorkflowHandle[] = [];
  let errors = 0;
  const run = randomUUID().slice(0, 8);
  let next = 0;
  const startedAt = Date.now();
  const until = startedAt + seconds * 1000;
  const workflow = shape === 'start' ? calibrationWorkflow : signalledCalibrationWorkflow;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (Date.now() < until) {
        const t0 = performance.now();
        try {
          const operation = new WithStartWorkflowOperation<typeof calibrationWorkflow>(workflow, {
            workflowId: `calibration-${run}-${next++}`,
            taskQueue,
            workflowIdConflictPolicy: 'FAIL',
          });
          await client.workflow.executeUpdateWithStart<typeof calibrationWorkflow, string, []>(
            doneUpdate,
            { startWorkflowOperation: operation },
          );
          samples.push(performance.now() - t0);
          if (shape === 'signalled') {
            const handle = await operation.workflowHandle();
            await handle.signal(paidSignal);
            started.push(handle);
          }
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsed = (Date.now() - startedAt) / 1000;
  let completedPerSecond: number | undefined;
  if (shape === 'signalled') {
    let lastCompletedAt = Date.now();
    await Promise.all(
      started.map(async (handle) => {
        await handle.result();
        lastCompletedAt = Math.max(lastCompletedAt, Date.now());
      }),
    );
    completedPerSecond = started.length / ((lastCompletedAt - startedAt) / 1000);
  }
  await connection.close();
  return {
    inFlight,
    seconds: elapsed,
    completed: samples.length,
    perSecond: samples.length / elapsed,
    completedPerSecond,
    ...percentiles(samples),
    errors,
  };
}

export interface Accepted {
  key: string;
  id: string;
  campaignId: string;
  amount: number;
  /** From the first attempt to the 202, retries included. */
  toAcceptedMs: number;
  /** From the first attempt until the payment action was known (the 202, or a GET after it). */
  toActionMs: number | undefined;
  pending: boolean;
}

export interface DonorsResult {
  accepted: Accepted[];
  /** Every answer by request and status code (`POST 202`, `GET 200`), retries included. */
  statuses: Map<string, number>;
  /** The first few 5xx answers' bodies, to tell what failed. */
  failures: string[];
  startedAt: number;
  seconds: number;
  /** Donations given up on (still 409/503 after every retry). */
  abandoned: number;
}

const RETRIED = new Set([409, 429, 502, 503, 504]);

/**
 * `donors` closed-loop donors on galang's real `POST /v1/donations` for `seconds`, the donations
 * spread over `campaignIds` in turn: each posts a donation with a new key, retries 409/503 (and a balancer's 502/504) after Retry-After with the
 * same key, and on a PENDING answer long-polls the GET for the payment action, as a donor's app
 * would; then the next donation. Donations in flight when the time is up are finished.
 */
export async function runDonors(
  apiUrl: string,
  campaignIds: readonly string[],
  donors: number,
  seconds: number,
): Promise<DonorsResult> {
  const accepted: Accepted[] = [];
  const statuses = new Map<string, number>();
  const failures: string[] = [];
  const count = (label: string, response: Response | undefined) => {
    const status = response?.status ?? 0;
    const key = `${label} ${status}`;
    statuses.set(key, (statuses.get(key) ?? 0) + 1);
    if ((status >= 500 || status === 0) && failures.length < 5 && response) {
      void response
        .clone()
        .text()
        .then((text) => failures.push(`${key}: ${text.slice(0, 300)}`));
    }
  };
  const auth = { authorization: `Bearer ${SPIKE_CLIENT.secret}` };
  const run = randomUUID().slice(0, 8);
  let abandoned = 0;
  let next = 0;
  const startedAt = Date.now();
  const until = startedAt + seconds * 1000;

  const donate = async () => {
    const i = next++;
    const key = `spike-${run}-${i}`;
    const amount = 10_000 + (i % 90) * 1_000;
    const campaignId = campaignIds[i % campaignIds.length];
    const body = JSON.stringify({
      campaignId,
      amount,
      currency: 'IDR',
      donor: { name: `Donor ${i}`, email: `donor${i}@example.com`, anonymous: i % 5 === 0 },
      paymentMethod: 'qris',
    });
    const t0 = performance.now();
    for (let attempt = 0; attempt < 60; attempt++) {
      const response = await fetch(`${apiUrl}/v1/donations`, {
        method: 'POST',
        headers: { ...auth, 'idempotency-key': key, 'content-type': 'application/json' },
        body,
      }).catch(() => undefined);
      const status = response?.status ?? 0;
      count('POST', response);
      if (response && status === 202) {
        const answer = (await response.json()) as { id: string; paymentAction: unknown };
        const toAcceptedMs = performance.now() - t0;
        const pending = answer.paymentAction === null;
        const action = pending ? await waitForAction(apiUrl, answer.id, auth, count) : true;
        accepted.push({
          key,
          id: answer.id,
          campaignId: campaignId ?? '',
          amount,
          toAcceptedMs,
          toActionMs: action ? performance.now() - t0 : undefined,
          pending,
        });
        return;
      }
      if (response && !RETRIED.has(status)) {
        throw new Error(`donation ${key}: ${status} ${await response.text()}`);
      }
      const retryAfter = Number(response?.headers.get('retry-after') ?? 1) || 1;
      await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
    }
    abandoned++;
  };

  await Promise.all(
    Array.from({ length: donors }, async () => {
      while (Date.now() < until) await donate();
    }),
  );
  return {
    accepted,
    statuses,
    failures,
    startedAt,
    seconds: (Date.now() - startedAt) / 1000,
    abandoned,
  };
}

/** Long-polls the donation until it shows its payment action; false if it never does. */
async function waitForAction(
  apiUrl: string,
  id: string,
  headers: Record<string, string>,
  count: (label: string, response: Response | undefined) => void,
): Promise<boolean> {
  for (let poll = 0; poll < 12; poll++) {
    const response = await fetch(`${apiUrl}/v1/donations/${id}?wait=10`, { headers }).catch(
      () => undefined,
    );
    count('GET', response);
    if (response?.status === 200) {
      const view = (await response.json()) as { paymentAction: unknown; status: string };
      if (view.paymentAction !== null) return true;
      if (view.status !== 'PENDING') return false;
    } else {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
  return false;
}

export { percentiles };

/** The middle value (the mean of the two middle ones for an even count); 0 for none. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return 0;
  return sorted.length % 2 === 1
    ? (sorted[mid] ?? 0)
    : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}
