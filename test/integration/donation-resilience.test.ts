import { randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { deriveUuid } from '../../src/idempotency/idempotency-key';
import { donationWorkflowId } from '../../workflows/contracts';
import type { DonationWorkflow } from '../../workflows/contracts';
import {
  clientAScope,
  effectsOf,
  postDonation,
  totalsOf,
  waitForStatus,
} from '../support/donations';
import { TcpProxy } from '../support/tcp-proxy';
import { spawnWorker } from '../support/worker-process';
import { createCampaign, donationBody, eventually, startStack } from '../support/stack';
import type { Stack } from '../support/stack';
import { testState } from '../support/test-env';

const EventType = temporal.api.enums.v1.EventType;

describe('reset safety', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ autoPayMs: 100 });
  });
  afterAll(async () => {
    await stack.stop();
  });

  /** Resets a closed donation workflow to a workflow task and waits for the new run. */
  async function resetTo(
    donationId: string,
    pick: (
      events: temporal.api.history.v1.IHistoryEvent[],
    ) => temporal.api.history.v1.IHistoryEvent | undefined,
  ) {
    const workflowId = donationWorkflowId(donationId);
    const handle = stack.temporal.workflow.getHandle(workflowId);
    const { runId } = await handle.describe();
    const history = await handle.fetchHistory();
    const target = pick(history.events ?? []);
    if (!target?.eventId) throw new Error('no reset point');
    const { runId: newRunId } = await stack.temporal.workflowService.resetWorkflowExecution({
      namespace: stack.config.temporal.namespace,
      workflowExecution: { workflowId, runId },
      reason: 'test: operator reset',
      workflowTaskFinishEventId: target.eventId,
      requestId: randomUUID(),
    });
    return stack.temporal.workflow.getHandle<DonationWorkflow>(workflowId, newRunId).result();
  }

  const completedTasks = (events: temporal.api.history.v1.IHistoryEvent[]) =>
    events.filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);

  it('repeats no effect when a finished donation is reset to its first workflow task', async () => {
    const campaignId = await createCampaign(stack.db);
    const response = await postDonation(
      stack.apiUrl,
      `reset-first-${Date.now()}`,
      donationBody(campaignId),
    );
    const { id } = (await response.json()) as { id: string };
    await stack.temporal.workflow.getHandle(donationWorkflowId(id)).result();
    const before = await effectsOf(stack, id);

    const rerun = await resetTo(id, (events) => completedTasks(events)[0]);
    expect(rerun).toMatchObject({ status: 'CONFIRMED', credited: false });
    const after = await effectsOf(stack, id);
    expect(after.ledger).toEqual(before.ledger);
    expect(after).toMatchObject({ donations: 1, charges: 1 });
    expect(await totalsOf(stack, campaignId)).toEqual({
      confirmed_amount: 50_000,
      donation_count: 1,
    });
  });

  it('repeats no effect when reset to the task after the payment was created', async () => {
    const campaignId = await createCampaign(stack.db);
    const response = await postDonation(
      stack.apiUrl,
      `reset-mid-${Date.now()}`,
      donationBody(campaignId),
    );
    const { id } = (await response.json()) as { id: string };
    await stack.temporal.workflow.getHandle(donationWorkflowId(id)).result();

    // The last completed workflow task before the payment event arrived: the run resumes
    // waiting, the reapplied signal settles it, and confirmDonation runs a second time.
    const rerun = await resetTo(id, (events) => {
      const signal = events.find(
        (e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED,
      );
      return completedTasks(events)
        .filter((e) => Number(e.eventId) < Number(signal?.eventId))
        .at(-1);
    });
    expect(rerun).toMatchObject({ status: 'CONFIRMED', credited: false });
    const effects = await effectsOf(stack, id);
    expect(effects.ledger).toEqual([{ entry_type: 'DONATION', amount: 50_000 }]);
    expect(effects).toMatchObject({ donations: 1, charges: 1 });
    expect(await totalsOf(stack, campaignId)).toEqual({
      confirmed_amount: 50_000,
      donation_count: 1,
    });
  });
});

describe('outages in the middle of a donation', () => {
  it('finishes once when Postgres is unreachable for 10 s mid-flight', async () => {
    const proxy = await TcpProxy.start('127.0.0.1:5432');
    const workerUrl = new URL(testState().databaseUrl);
    workerUrl.port = String(proxy.port);
    const stack = await startStack({ autoPayMs: -1, workerDatabaseUrl: workerUrl.toString() });
    try {
      const campaignId = await createCampaign(stack.db);
      const key = `pg-outage-${Date.now()}`;
      const id = deriveUuid(clientAScope(key));
      expect((await postDonation(stack.apiUrl, key, donationBody(campaignId))).status).toBe(202);

      proxy.set('refuse');
      stack.simulator.transition(stack.simulator.paymentByReference(id)?.id ?? '', 'settled');
      await new Promise((resolve) => setTimeout(resolve, 10_000));
      const during = await stack.db
        .selectFrom('donations')
        .select('status')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      expect(during.status).toBe('AWAITING_PAYMENT');
      proxy.set('pass');

      await waitForStatus(stack, id, 'CONFIRMED', 60_000);
      const effects = await effectsOf(stack, id);
      expect(effects.ledger).toHaveLength(1);
      expect(effects).toMatchObject({ donations: 1, workflows: 1, charges: 1 });
      expect(await totalsOf(stack, campaignId)).toEqual({
        confirmed_amount: 50_000,
        donation_count: 1,
      });
    } finally {
      await stack.stop();
      await proxy.close();
    }
  }, 120_000);

  it('finishes once when the worker is killed mid-flight and another one starts', async () => {
    const stack = await startStack({ autoPayMs: -1, noWorker: true });
    // The first worker reaches the provider through a proxy that loses the provider's answers.
    const gateway = await TcpProxy.start(new URL(stack.simulatorUrl).host);
    gateway.set('drop-downstream');
    const first = await spawnWorker(stack, { env: { SIMULATOR_URL: `http://${gateway.address}` } });
    let worker = first;
    try {
      const campaignId = await createCampaign(stack.db);
      const key = `worker-crash-${Date.now()}`;
      const id = deriveUuid(clientAScope(key));
      const accepted = postDonation(stack.apiUrl, key, donationBody(campaignId));
      const handle = stack.temporal.workflow.getHandle(donationWorkflowId(id));

      // Mid-flight: the provider made the payment, the worker never heard so (no step result
      // in the history, no reference on the row) and is still in the step.
      const created = await eventually(async () => stack.simulator.paymentByReference(id));
      const history = await handle.fetchHistory();
      expect(
        history.events?.filter((e) => e.eventType === EventType.EVENT_TYPE_MARKER_RECORDED),
      ).toEqual([]);
      expect(
        await stack.db
          .selectFrom('donations')
          .select(['status', 'provider_reference'])
          .where('id', '=', id)
          .executeTakeFirstOrThrow(),
      ).toEqual({ status: 'PENDING', provider_reference: null });
      expect(stack.simulator.chargeCount(`${id}:create`)).toBe(1);

      await first.kill9();
      // The donor pays while no worker runs; the notification waits in the workflow's history.
      stack.simulator.transition(created.id, 'settled');
      worker = await spawnWorker(stack);

      // The new worker repeated the step and got the same payment back, not a second one.
      const reference = await eventually(async () => {
        const row = await stack.db
          .selectFrom('donations')
          .select('provider_reference')
          .where('id', '=', id)
          .executeTakeFirstOrThrow();
        return row.provider_reference ?? undefined;
      }, 60_000);
      expect(reference).toBe(created.id);
      await waitForStatus(stack, id, 'CONFIRMED');
      expect(await handle.result()).toMatchObject({ status: 'CONFIRMED', credited: true });
      expect((await accepted).status).toBe(202);
      const effects = await effectsOf(stack, id);
      expect(effects.ledger).toEqual([{ entry_type: 'DONATION', amount: 50_000 }]);
      expect(effects).toMatchObject({ donations: 1, workflows: 1, charges: 1 });
      expect(await totalsOf(stack, campaignId)).toEqual({
        confirmed_amount: 50_000,
        donation_count: 1,
      });
    } finally {
      // A first worker still in its step would hold a graceful shutdown until the step's end.
      await (worker === first ? first.kill9() : worker.stop());
      await stack.stop();
      await gateway.close();
    }
  }, 120_000);
});
