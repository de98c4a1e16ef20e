import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { LateDecision } from '../../activities/reversal-activities';
import {
  WorkflowType,
  latePaymentWorkflowId,
  refundRequestWorkflowId,
  reversalWorkflowId,
} from '../../workflows/contracts';
import type {
  LatePaymentInput,
  LatePaymentWorkflow,
  PaymentStatus,
  RefundRequestInput,
  RefundRequestWorkflow,
} from '../../workflows/contracts';
import { connectToDevServer, recorded, snapshot, withWorker } from '../support/stub-worker';

const REFERENCE = 'pay_late_1';
const AMOUNT = 25_000;

function lateStubs(provider: { status: PaymentStatus; amount: number }, decision: LateDecision) {
  return recorded({
    fetchPayment: async (_provider, reference) =>
      snapshot(reference, provider.status, provider.amount),
    decideLatePayment: async () => decision,
    confirmDonation: async () => ({
      status: 'CONFIRMED',
      credited: true,
      inserted: true,
      campaignId: 'campaign-late',
    }),
    donationStatus: async () => ({ status: 'EXPIRED', credited: false }),
    reviewLatePayment: async () => 'NEEDS_REVIEW',
    requestRefund: async (input) => ({
      refundId: 're_late',
      status: 'PENDING',
      amount: input.amount,
    }),
    followReversal: async (ref, event) =>
      reversalWorkflowId(ref.donationId, event.kind, event.eventKey),
  });
}

function lateInput(): LatePaymentInput {
  return {
    donationId: randomUUID(),
    campaignId: 'campaign-late',
    provider: 'simulator',
    providerReference: REFERENCE,
    verifyWithProvider: false,
    amount: AMOUNT,
    currency: 'IDR',
    event: {
      kind: 'payment',
      eventKey: `evt-${randomUUID()}`,
      providerReference: REFERENCE,
      status: 'PAID',
      amount: AMOUNT,
      currency: 'IDR',
      occurredAt: new Date().toISOString(),
    },
  };
}

describe('late payment and refund request workflows with stub activities', () => {
  let env: TestWorkflowEnvironment;

  beforeAll(async () => {
    env = await connectToDevServer();
  });
  afterAll(async () => {
    await env.teardown();
  });

  const runLate = (activities: object, input: LatePaymentInput) =>
    withWorker(env, activities, (taskQueue) =>
      env.client.workflow.execute<LatePaymentWorkflow>(WorkflowType.latePayment, {
        workflowId: latePaymentWorkflowId(input.donationId),
        taskQueue,
        args: [input],
      }),
    );

  it('credits nothing when the provider says the payment is not paid', async () => {
    const stubs = lateStubs({ status: 'EXPIRED', amount: AMOUNT }, 'credit');
    const input = lateInput();
    await expect(runLate(stubs.activities, input)).resolves.toEqual({
      outcome: 'not-paid',
      donationStatus: 'EXPIRED',
    });
    expect(stubs.names()).toEqual(['fetchPayment', 'donationStatus']);
  });

  it('credits a late payment while the campaign still takes donations', async () => {
    const stubs = lateStubs({ status: 'PAID', amount: AMOUNT }, 'credit');
    const input = lateInput();
    await expect(runLate(stubs.activities, input)).resolves.toEqual({
      outcome: 'credited',
      donationStatus: 'CONFIRMED',
    });
    expect(stubs.names()).toEqual(['fetchPayment', 'decideLatePayment', 'confirmDonation']);
    expect(stubs.argsOf('decideLatePayment')).toEqual([['campaign-late']]);
    expect(stubs.argsOf('confirmDonation')).toEqual([[input.donationId, true]]);
  });

  it('leaves a late payment of another amount to review', async () => {
    const stubs = lateStubs({ status: 'PAID', amount: AMOUNT - 1 }, 'credit');
    await expect(runLate(stubs.activities, lateInput())).resolves.toEqual({
      outcome: 'needs-review',
      donationStatus: 'NEEDS_REVIEW',
    });
    expect(stubs.count('confirmDonation')).toBe(0);
    expect(stubs.count('reviewLatePayment')).toBe(1);
  });

  it('credits, then refunds through a child request, a late payment to a closed campaign', async () => {
    const stubs = lateStubs({ status: 'PAID', amount: AMOUNT }, 'refund');
    const input = lateInput();
    await expect(runLate(stubs.activities, input)).resolves.toEqual({
      outcome: 'refunded',
      donationStatus: 'EXPIRED',
    });
    expect(stubs.names()).toEqual([
      'fetchPayment',
      'decideLatePayment',
      'confirmDonation',
      'requestRefund',
      'followReversal',
      'donationStatus',
    ]);
    expect(stubs.argsOf('requestRefund')).toEqual([
      [
        {
          donationId: input.donationId,
          campaignId: 'campaign-late',
          provider: 'simulator',
          providerReference: REFERENCE,
          verifyWithProvider: false,
          amount: AMOUNT,
          currency: 'IDR',
          reason: 'late payment to a closed campaign',
          requestKey: 'late-payment',
        },
      ],
    ]);
    const child = env.client.workflow.getHandle(
      refundRequestWorkflowId(input.donationId, 'late-payment'),
    );
    const description = await child.describe();
    expect(description.type).toBe(WorkflowType.refundRequest);
    expect(description.status.name).toBe('COMPLETED');
    expect(description.parentExecution?.workflowId).toBe(latePaymentWorkflowId(input.donationId));
  });

  it('asks the provider for a refund once, then hands the refund to its reversal', async () => {
    const stubs = lateStubs({ status: 'PAID', amount: AMOUNT }, 'credit');
    const donationId = randomUUID();
    const request: RefundRequestInput = {
      donationId,
      campaignId: 'campaign-late',
      provider: 'simulator',
      providerReference: REFERENCE,
      verifyWithProvider: true,
      amount: 5_000,
      currency: 'IDR',
      reason: 'donor asked',
      requestKey: 'op-1',
    };
    const result = await withWorker(env, stubs.activities, (taskQueue) =>
      env.client.workflow.execute<RefundRequestWorkflow>(WorkflowType.refundRequest, {
        workflowId: refundRequestWorkflowId(donationId, 'op-1'),
        taskQueue,
        args: [request],
      }),
    );
    expect(result).toEqual({ refundId: 're_late', status: 'PENDING' });
    expect(stubs.names()).toEqual(['requestRefund', 'followReversal']);
    expect(stubs.argsOf('requestRefund')).toEqual([[request]]);
    const [ref, event] = stubs.argsOf('followReversal')[0] ?? [];
    expect(ref).toEqual({
      donationId,
      campaignId: 'campaign-late',
      provider: 'simulator',
      providerReference: REFERENCE,
      verifyWithProvider: true,
    });
    expect(event).toMatchObject({
      kind: 'refund',
      refundId: 're_late',
      status: 'PENDING',
      amount: 5_000,
      currency: 'IDR',
      providerReference: REFERENCE,
    });
  });
});
