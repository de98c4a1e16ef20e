import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { paymentEventSignal } from '../../workflows/contracts';
import {
  AMOUNT,
  REFERENCE,
  begin,
  donationInput,
  donationStubs,
  gate,
  paymentEvent,
  timeline,
} from '../support/donation-stubs';
import type { FakePayment } from '../support/donation-stubs';
import { connectToDevServer, until, withWorker } from '../support/stub-worker';

/**
 * The donation workflow past its deadline, with stub activities: real short timers
 * (paymentTimeoutSeconds 1, a settle horizon of 1–2 s) rather than the time-skipping server.
 */
describe('donation workflow at the deadline with stub activities', () => {
  let env: TestWorkflowEnvironment;

  beforeAll(async () => {
    env = await connectToDevServer();
  });
  afterAll(async () => {
    await env.teardown();
  });

  it('at the deadline asks the provider, closes the payment and expires', async () => {
    const stubs = donationStubs({ status: 'PENDING', amount: AMOUNT, closable: true });
    const input = donationInput({ paymentTimeoutSeconds: 1 });
    await withWorker(env, stubs.activities, async (taskQueue) => {
      const { handle } = await begin(env.client, input, taskQueue);
      await expect(handle.result()).resolves.toMatchObject({ status: 'EXPIRED', credited: false });
      expect(await timeline(handle)).toEqual([
        'status:AWAITING_PAYMENT',
        'deadline-reached',
        'provider-status',
        'cancel',
        'status:EXPIRED',
      ]);
    });
    expect(stubs.names()).toEqual(['startPayment', 'fetchPayment', 'closePayment', 'failDonation']);
    expect(stubs.argsOf('fetchPayment')).toEqual([['simulator', REFERENCE]]);
    expect(stubs.argsOf('closePayment')).toEqual([['simulator', REFERENCE]]);
    expect(stubs.argsOf('failDonation')).toEqual([
      [input.donationId, 'EXPIRED', 'no-payment-before-deadline'],
    ]);
  });

  it('credits at the deadline a payment whose notification never came', async () => {
    const stubs = donationStubs({ status: 'PAID', amount: AMOUNT, closable: true });
    const input = donationInput({ paymentTimeoutSeconds: 1 });
    await withWorker(env, stubs.activities, async (taskQueue) => {
      const { handle } = await begin(env.client, input, taskQueue);
      await expect(handle.result()).resolves.toMatchObject({ status: 'CONFIRMED', credited: true });
    });
    expect(stubs.names()).toEqual(['startPayment', 'fetchPayment', 'confirmDonation']);
  });

  it('credits a payment the donor paid between the deadline read and the cancel', async () => {
    const payment: FakePayment = { status: 'PENDING', amount: AMOUNT, closable: true };
    payment.beforeClose = () => {
      payment.status = 'PAID';
    };
    const stubs = donationStubs(payment);
    const input = donationInput({ paymentTimeoutSeconds: 1 });
    await withWorker(env, stubs.activities, async (taskQueue) => {
      const { handle } = await begin(env.client, input, taskQueue);
      await expect(handle.result()).resolves.toMatchObject({ status: 'CONFIRMED', credited: true });
    });
    expect(stubs.names()).toEqual([
      'startPayment',
      'fetchPayment',
      'closePayment',
      'confirmDonation',
    ]);
  });

  it('keeps asking a payment whose cancel was refused and credits it when it is paid', async () => {
    const payment: FakePayment = { status: 'PENDING', amount: AMOUNT, closable: false };
    payment.afterClose = () => {
      payment.status = 'PAID';
    };
    const stubs = donationStubs(payment);
    const input = donationInput({ paymentTimeoutSeconds: 1, settleHorizonSeconds: 2 });
    await withWorker(env, stubs.activities, async (taskQueue) => {
      const { handle } = await begin(env.client, input, taskQueue);
      await expect(handle.result()).resolves.toMatchObject({ status: 'CONFIRMED', credited: true });
    });
    expect(stubs.names()).toEqual([
      'startPayment',
      'fetchPayment',
      'closePayment',
      'fetchPayment',
      'confirmDonation',
    ]);
  });

  it('still listens to notifications while it checks a payment in processing', async () => {
    const stubs = donationStubs({ status: 'PENDING', amount: AMOUNT, closable: false });
    const input = donationInput({ paymentTimeoutSeconds: 1, settleHorizonSeconds: 60 });
    await withWorker(env, stubs.activities, async (taskQueue) => {
      const { handle } = await begin(env.client, input, taskQueue);
      await until(() => stubs.count('closePayment') > 0 || undefined);
      await handle.signal(paymentEventSignal, paymentEvent('PAID'));
      await expect(handle.result()).resolves.toMatchObject({ status: 'CONFIRMED', credited: true });
    });
    expect(stubs.count('failDonation')).toBe(0);
    expect(stubs.count('confirmDonation')).toBe(1);
  });

  it('leaves a payment still unsettled past the settle horizon to review', async () => {
    const stubs = donationStubs({ status: 'PENDING', amount: AMOUNT, closable: false });
    const input = donationInput({ paymentTimeoutSeconds: 1, settleHorizonSeconds: 1 });
    await withWorker(env, stubs.activities, async (taskQueue) => {
      const { handle } = await begin(env.client, input, taskQueue);
      await expect(handle.result()).resolves.toMatchObject({
        status: 'NEEDS_REVIEW',
        credited: false,
      });
    });
    // Asked at the deadline and again when the horizon's timer fired.
    expect(stubs.count('fetchPayment')).toBeGreaterThanOrEqual(2);
    expect(stubs.count('closePayment')).toBe(1);
    expect(stubs.argsOf('failDonation')).toEqual([
      [input.donationId, 'NEEDS_REVIEW', 'payment-unsettled-after-horizon'],
    ]);
    expect(stubs.count('confirmDonation')).toBe(0);
  });

  it('does not lose a PAID that lands while the expiry is written', async () => {
    // PAID after EXPIRED is accepted (a success is never lost). The signal fails the workflow
    // task that ran the local fetch and failDonation (unhandled command); the retried task sees
    // PAID first and confirms, but the lost attempt had written EXPIRED on the row already.
    const hold = gate();
    const payment: FakePayment = { status: 'EXPIRED', amount: AMOUNT, closable: false };
    const stubs = donationStubs(payment, undefined, { failDonation: hold.promise });
    const input = donationInput({ paymentTimeoutSeconds: 1 });
    const result = await withWorker(env, stubs.activities, async (taskQueue) => {
      const { handle } = await begin(env.client, input, taskQueue);
      await until(() => stubs.count('failDonation') > 0 || undefined);
      // The provider expired the payment, then took the donor's late transfer after all.
      payment.status = 'PAID';
      await handle.signal(paymentEventSignal, paymentEvent('PAID'));
      hold.open();
      return handle.result();
    });
    // Credited by this workflow itself, late (the row says EXPIRED): no detour through a
    // late-payment workflow, and the expiry the lost attempt wrote does not stand.
    expect(result).toMatchObject({ status: 'CONFIRMED', credited: true });
    expect(stubs.argsOf('confirmDonation')).toEqual([[input.donationId, true]]);
    expect(stubs.count('startLatePayment')).toBe(0);
  });

  it('hands a success that lands after the ending was decided to its late payment', async () => {
    // A slow ending write outlives its workflow task (the SDK heartbeats the task), so a PAID
    // signalled then reaches the run past its last look; the webhook's own row read may come
    // before the ending is written, so only this run can hand it on. Seen under load (#22).
    const hold = gate();
    const payment: FakePayment = { status: 'DECLINED', amount: AMOUNT, closable: false };
    const stubs = donationStubs(payment, undefined, { failDonation: hold.promise });
    const input = donationInput({ verifyWithProvider: true });
    const result = await withWorker(env, stubs.activities, async (taskQueue) => {
      const { handle } = await begin(env.client, input, taskQueue, '2s');
      await handle.signal(paymentEventSignal, paymentEvent('DECLINED'));
      await until(() => stubs.count('failDonation') > 0 || undefined);
      const tasks = await completedTasks(handle);
      await until(async () => ((await completedTasks(handle)) > tasks ? true : undefined), 10_000);
      payment.status = 'PAID';
      await handle.signal(paymentEventSignal, paymentEvent('PAID'));
      await until(async () => ((await completedTasks(handle)) > tasks + 1 ? true : undefined));
      hold.open();
      return handle.result();
    });
    expect(result).toMatchObject({ status: 'FAILED', credited: false });
    expect(stubs.argsOf('startLatePayment')).toEqual([
      [expect.objectContaining({ donationId: input.donationId, providerReference: REFERENCE })],
    ]);
  });
});

/** Completed workflow tasks so far: a local activity's heartbeat completes one, too. */
async function completedTasks(handle: WorkflowHandle): Promise<number> {
  const events = (await handle.fetchHistory()).events ?? [];
  return events.filter(
    (e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
  ).length;
}
