import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { donationStartOptions } from '../../src/donations/donation-start-options';
import {
  FailureType,
  WorkflowType,
  getStateQuery,
  paymentEventSignal,
} from '../../workflows/contracts';
import type { DonationWorkflow, PaymentEvent } from '../../workflows/contracts';
import {
  ACTION,
  AMOUNT,
  begin,
  donationInput,
  donationStubs,
  gate,
  paymentEvent,
  REFERENCE,
  timeline,
} from '../support/donation-stubs';
import type { FakePayment } from '../support/donation-stubs';
import { connectToDevServer, until, withWorker } from '../support/stub-worker';

/** The donation workflow's answers to the edge and to notifications, with stub activities. */
describe('donation workflow with stub activities', () => {
  let env: TestWorkflowEnvironment;

  beforeAll(async () => {
    env = await connectToDevServer();
  });
  afterAll(async () => {
    await env.teardown();
  });

  it('answers the payment action, then credits a PAID notification once', async () => {
    const stubs = donationStubs({ status: 'PENDING', amount: AMOUNT, closable: true });
    const input = donationInput();
    await withWorker(env, stubs.activities, async (taskQueue) => {
      const { answer, handle } = await begin(env.client, input, taskQueue);
      await expect(answer).resolves.toEqual({
        donationId: input.donationId,
        status: 'AWAITING_PAYMENT',
        action: ACTION,
      });
      await handle.signal(paymentEventSignal, paymentEvent('PAID'));
      await expect(handle.result()).resolves.toEqual({
        donationId: input.donationId,
        status: 'CONFIRMED',
        credited: true,
      });
    });
    expect(stubs.names()).toEqual(['startPayment', 'confirmDonation']);
    expect(stubs.argsOf('confirmDonation')).toEqual([[input.donationId, true]]);
  });

  it('reports a duplicate PAID credited even when the local confirm runs again', async () => {
    // A signal that lands while the local confirm runs fails that workflow task (unhandled
    // command): the marker is lost and confirmDonation re-runs, which the ledger makes a no-op.
    const hold = gate();
    const payment: FakePayment = { status: 'PENDING', amount: AMOUNT, closable: true };
    const stubs = donationStubs(payment, undefined, { confirmDonation: hold.promise });
    const input = donationInput();
    await withWorker(env, stubs.activities, async (taskQueue) => {
      const { handle } = await begin(env.client, input, taskQueue);
      await handle.signal(paymentEventSignal, paymentEvent('PAID'));
      await until(() => stubs.count('confirmDonation') > 0 || undefined);
      await handle.signal(paymentEventSignal, paymentEvent('PAID'));
      hold.open();
      await expect(handle.result()).resolves.toMatchObject({ status: 'CONFIRMED', credited: true });
    });
    expect(stubs.argsOf('confirmDonation')).toEqual([
      [input.donationId, true],
      [input.donationId, true],
    ]);
    expect(stubs.count('failDonation')).toBe(0);
  });

  it.each([
    ['DECLINED', 'FAILED', 'payment-declined'],
    ['CANCELED', 'CANCELED', 'canceled-at-provider'],
  ] as const)('ends a %s payment as %s without money', async (paymentStatus, status, reason) => {
    const stubs = donationStubs({ status: 'PENDING', amount: AMOUNT, closable: true });
    const input = donationInput();
    await withWorker(env, stubs.activities, async (taskQueue) => {
      const { handle } = await begin(env.client, input, taskQueue);
      await handle.signal(paymentEventSignal, paymentEvent(paymentStatus));
      await expect(handle.result()).resolves.toEqual({
        donationId: input.donationId,
        status,
        credited: false,
      });
    });
    expect(stubs.argsOf('failDonation')).toEqual([[input.donationId, status, reason]]);
    expect(stubs.count('confirmDonation')).toBe(0);
  });

  it('credits a notification that must be verified only once the status read says PAID', async () => {
    const payment: FakePayment = { status: 'PENDING', amount: AMOUNT, closable: true };
    const stubs = donationStubs(payment);
    const input = donationInput({ verifyWithProvider: true });
    await withWorker(env, stubs.activities, async (taskQueue) => {
      const { handle } = await begin(env.client, input, taskQueue);
      await handle.signal(paymentEventSignal, paymentEvent('PAID'));
      await until(() => stubs.count('fetchPayment') === 1 || undefined);
      const state = await handle.query(getStateQuery);
      expect(state.status).toBe('AWAITING_PAYMENT');
      expect(state.payment?.status).toBe('PENDING');
      expect(stubs.count('confirmDonation')).toBe(0);

      payment.status = 'PAID';
      await handle.signal(paymentEventSignal, paymentEvent('PAID'));
      await expect(handle.result()).resolves.toMatchObject({ status: 'CONFIRMED', credited: true });
      expect(await timeline(handle)).toEqual([
        'status:AWAITING_PAYMENT',
        'payment-event-to-verify',
        'provider-status',
        'payment-event-to-verify',
        'provider-status',
        'status:CONFIRMED',
      ]);
    });
    expect(stubs.names()).toEqual([
      'startPayment',
      'fetchPayment',
      'fetchPayment',
      'confirmDonation',
    ]);
  });

  it('ignores a notification about another payment', async () => {
    const stubs = donationStubs({ status: 'PENDING', amount: AMOUNT, closable: true });
    const input = donationInput({ paymentTimeoutSeconds: 1 });
    await withWorker(env, stubs.activities, async (taskQueue) => {
      const { handle } = await begin(env.client, input, taskQueue);
      await handle.signal(paymentEventSignal, paymentEvent('PAID', { providerReference: 'other' }));
      await expect(handle.result()).resolves.toMatchObject({ status: 'EXPIRED', credited: false });
      expect(await timeline(handle)).toContain('payment-event-mismatched');
    });
    expect(stubs.count('confirmDonation')).toBe(0);
    expect(stubs.count('startLatePayment')).toBe(0);
  });

  it('applies a notification that came before the payment existed', async () => {
    const stubs = donationStubs({ status: 'PENDING', amount: AMOUNT, closable: true });
    const input = donationInput();
    await withWorker(env, stubs.activities, async (taskQueue) => {
      const handle = await env.client.workflow.signalWithStart<DonationWorkflow, [PaymentEvent]>(
        WorkflowType.donation,
        {
          ...donationStartOptions(input, taskQueue, { status: 'PENDING' }),
          signal: paymentEventSignal,
          signalArgs: [paymentEvent('PAID')],
        },
      );
      await expect(handle.result()).resolves.toMatchObject({ status: 'CONFIRMED', credited: true });
    });
    expect(stubs.names()).toEqual(['startPayment', 'confirmDonation']);
  });

  it('leaves a payment of another amount to review', async () => {
    const stubs = donationStubs({ status: 'PENDING', amount: AMOUNT, closable: true });
    const input = donationInput();
    await withWorker(env, stubs.activities, async (taskQueue) => {
      const { handle } = await begin(env.client, input, taskQueue);
      await handle.signal(paymentEventSignal, paymentEvent('PAID', { amount: 5_000 }));
      await expect(handle.result()).resolves.toMatchObject({
        status: 'NEEDS_REVIEW',
        credited: false,
      });
    });
    expect(stubs.argsOf('failDonation')).toEqual([
      [input.donationId, 'NEEDS_REVIEW', 'paid 5000 IDR, expected 10000 IDR'],
    ]);
    expect(stubs.count('confirmDonation')).toBe(0);
    expect(stubs.count('startLatePayment')).toBe(0);
  });

  it('hands a PAID to its late payment when an earlier run ended the row first', async () => {
    // A reset raced the ending: the row says EXPIRED, whatever this run meant to record.
    const stubs = donationStubs(
      { status: 'PAID', amount: 5_000, closable: false },
      undefined,
      {},
      'EXPIRED',
    );
    const input = donationInput();
    await withWorker(env, stubs.activities, async (taskQueue) => {
      const { handle } = await begin(env.client, input, taskQueue);
      await handle.signal(paymentEventSignal, paymentEvent('PAID', { amount: 5_000 }));
      await expect(handle.result()).resolves.toMatchObject({ status: 'EXPIRED', credited: false });
    });
    expect(stubs.argsOf('failDonation')).toEqual([
      [input.donationId, 'NEEDS_REVIEW', 'paid 5000 IDR, expected 10000 IDR'],
    ]);
    expect(stubs.argsOf('startLatePayment')).toEqual([
      [expect.objectContaining({ donationId: input.donationId, providerReference: REFERENCE })],
    ]);
  });

  it('fails the payment action with the typed failure of a refused start', async () => {
    const stubs = donationStubs(
      { status: 'PENDING', amount: AMOUNT, closable: true },
      { kind: 'refused', failureType: FailureType.CampaignClosed, reason: 'campaign-closed' },
    );
    const input = donationInput();
    await withWorker(env, stubs.activities, async (taskQueue) => {
      const { answer, handle } = await begin(env.client, input, taskQueue);
      const failure = await answer.then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(WorkflowUpdateFailedError);
      const cause = (failure as WorkflowUpdateFailedError).cause;
      expect(cause).toBeInstanceOf(ApplicationFailure);
      expect(cause).toMatchObject({
        type: FailureType.CampaignClosed,
        nonRetryable: true,
        message: 'Donation refused: campaign-closed',
      });
      await expect(handle.result()).resolves.toEqual({
        donationId: input.donationId,
        status: 'FAILED',
        credited: false,
      });
    });
    expect(stubs.names()).toEqual(['startPayment']);
  });

  it('fails the payment action of a donation decided before this run', async () => {
    const stubs = donationStubs(
      { status: 'PENDING', amount: AMOUNT, closable: true },
      { kind: 'decided', status: 'CONFIRMED', providerReference: REFERENCE },
    );
    const input = donationInput();
    await withWorker(env, stubs.activities, async (taskQueue) => {
      const { answer, handle } = await begin(env.client, input, taskQueue);
      await expect(answer).rejects.toMatchObject({
        cause: { type: FailureType.AlreadyDecided },
      });
      await expect(handle.result()).resolves.toMatchObject({
        status: 'CONFIRMED',
        credited: false,
      });
    });
    expect(stubs.names()).toEqual(['startPayment']);
  });

  it('hands a PAID that reached a run of a donation closed without money to its late payment', async () => {
    // A reset of an expired donation: the new run finds it decided, but the donor's success
    // came in while it looked.
    const hold = gate();
    const stubs = donationStubs(
      { status: 'PAID', amount: AMOUNT, closable: false },
      { kind: 'decided', status: 'EXPIRED', providerReference: REFERENCE },
      { startPayment: hold.promise },
    );
    const input = donationInput();
    await withWorker(env, stubs.activities, async (taskQueue) => {
      const { answer, handle } = await begin(env.client, input, taskQueue);
      await until(() => stubs.count('startPayment') > 0 || undefined);
      await handle.signal(paymentEventSignal, paymentEvent('PAID'));
      hold.open();
      await expect(answer).rejects.toMatchObject({ cause: { type: FailureType.AlreadyDecided } });
      await expect(handle.result()).resolves.toMatchObject({ status: 'EXPIRED', credited: false });
    });
    expect(stubs.argsOf('startLatePayment')).toEqual([
      [expect.objectContaining({ donationId: input.donationId, providerReference: REFERENCE })],
    ]);
  });

  it('hands no late payment for a donation credited before, though a dispute left it for review', async () => {
    // A reset of a donation a dispute took below zero: NEEDS_REVIEW, but its money was credited
    // once, so the donor's replayed success must not start a late payment (and its refund).
    const hold = gate();
    const stubs = donationStubs(
      { status: 'PAID', amount: AMOUNT, closable: false },
      { kind: 'decided', status: 'NEEDS_REVIEW', providerReference: REFERENCE, credited: true },
      { startPayment: hold.promise },
    );
    const input = donationInput();
    await withWorker(env, stubs.activities, async (taskQueue) => {
      const { answer, handle } = await begin(env.client, input, taskQueue);
      await until(() => stubs.count('startPayment') > 0 || undefined);
      await handle.signal(paymentEventSignal, paymentEvent('PAID'));
      hold.open();
      await expect(answer).rejects.toMatchObject({ cause: { type: FailureType.AlreadyDecided } });
      await expect(handle.result()).resolves.toMatchObject({ status: 'NEEDS_REVIEW' });
    });
    expect(stubs.count('startLatePayment')).toBe(0);
  });
});
