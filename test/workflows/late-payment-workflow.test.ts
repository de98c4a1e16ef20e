import { refundIdempotencyKey } from '../../src/providers/refund-keys';
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { LateDecision } from '../../activities/reversal-activities';
import {
  WorkflowType,
  latePaymentWorkflowId,
  refundRequestWorkflowId,
  reversalWorkflowId,
} from '../../workflows/contracts';
import type {
  DonationStatus,
  LatePaymentInput,
  LatePaymentWorkflow,
  PaymentStatus,
  RefundRequestInput,
  RefundRequestWorkflow,
  ReversalOutcome,
} from '../../workflows/contracts';
import { LedgerRepository } from '../../src/ledger/ledger-repository';
import { ledgerActivities, ledgerState, seedDonation } from '../support/ledger-activities';
import { connectToDevServer, recorded, snapshot, withWorker } from '../support/stub-worker';
import type { Activities } from '../support/stub-worker';

const REFERENCE = 'pay_late_1';
const AMOUNT = 25_000;

/** How the late refund's reversal reads, call by call (the last answer repeats). */
type ReversalReads = (ReversalOutcome | 'closed' | undefined)[];

/** How the late refund goes: its reversal's reads, the hold's answer, the request itself. */
interface RefundScript {
  reversal?: ReversalReads;
  held?: { held: boolean; status: DonationStatus };
  requestRefund?: Activities['requestRefund'];
}

function lateStubs(
  provider: { status: PaymentStatus; amount: number },
  decision: LateDecision,
  script: RefundScript = {},
) {
  const reads = [...(script.reversal ?? ['posted'])];
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
    followProviderTruth: async () => 0,
    requestRefund:
      script.requestRefund ??
      (async (input) => ({ refundId: 're_late', status: 'PENDING', amount: input.amount })),
    followReversal: async (ref, event) =>
      reversalWorkflowId(ref.donationId, event.kind, event.eventKey),
    reversalOutcome: async () => (reads.length > 1 ? reads.shift() : reads[0]),
    holdLateRefund: async () => script.held ?? { held: false, status: 'REFUNDED' },
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

  const runLate = (stubs: ReturnType<typeof lateStubs>, input: LatePaymentInput) =>
    withWorker(env, stubs.activities, (taskQueue) =>
      env.client.workflow.execute<LatePaymentWorkflow>(WorkflowType.latePayment, {
        workflowId: latePaymentWorkflowId(input.donationId),
        taskQueue,
        args: [input],
      }),
    );

  it('credits, then reads the provider again for reversals that came before the credit', async () => {
    const stubs = lateStubs({ status: 'PAID', amount: AMOUNT }, 'credit');
    const input = lateInput();
    expect(await runLate(stubs, input)).toEqual({
      outcome: 'credited',
      donationStatus: 'CONFIRMED',
    });
    expect(stubs.names()).toEqual([
      'fetchPayment',
      'decideLatePayment',
      'confirmDonation',
      'followProviderTruth',
    ]);
    expect(stubs.argsOf('followProviderTruth')).toEqual([
      [
        {
          donationId: input.donationId,
          campaignId: input.campaignId,
          provider: input.provider,
          providerReference: REFERENCE,
          verifyWithProvider: false,
        },
      ],
    ]);
  });

  it('holds for an operator a late payment it may neither credit nor refund', async () => {
    const stubs = lateStubs({ status: 'PAID', amount: AMOUNT }, 'hold');
    const input = lateInput();
    expect(await runLate(stubs, input)).toEqual({
      outcome: 'needs-review',
      donationStatus: 'NEEDS_REVIEW',
      reason: 'late-payment-not-refundable',
    });
    expect(stubs.names()).toEqual(['fetchPayment', 'decideLatePayment', 'reviewLatePayment']);
    expect(stubs.argsOf('decideLatePayment')).toEqual([[input.donationId]]);
  });

  const refundPath = [
    'fetchPayment',
    'decideLatePayment',
    'confirmDonation',
    'followProviderTruth',
    'requestRefund',
    'followReversal',
  ];

  it('follows the late refund until its reversal posted it, then reports it refunded', async () => {
    const stubs = lateStubs({ status: 'PAID', amount: AMOUNT }, 'refund', {
      reversal: [undefined, 'posted'],
    });
    const input = lateInput();
    expect(await runLate(stubs, input)).toEqual({
      outcome: 'refunded',
      donationStatus: 'REFUNDED',
    });
    expect(stubs.names()).toEqual([
      ...refundPath,
      'reversalOutcome',
      'reversalOutcome',
      'holdLateRefund',
    ]);
    expect(stubs.argsOf('reversalOutcome')[0]).toEqual([input.donationId, 're_late']);
  });

  it('holds for review a late payment whose refund the provider denied', async () => {
    const stubs = lateStubs({ status: 'PAID', amount: AMOUNT }, 'refund', {
      reversal: ['no-money-moved'],
      held: { held: true, status: 'NEEDS_REVIEW' },
    });
    const input = lateInput();
    expect(await runLate(stubs, input)).toEqual({
      outcome: 'needs-review',
      donationStatus: 'NEEDS_REVIEW',
      reason: 'late-payment-refund-failed',
    });
    expect(stubs.names()).toEqual([...refundPath, 'reversalOutcome', 'holdLateRefund']);
    expect(stubs.argsOf('holdLateRefund')).toEqual([
      [input.donationId, 'late-payment-refund-failed'],
    ]);
  });

  it('holds for review a late payment whose refund request was refused for good', async () => {
    const stubs = lateStubs({ status: 'PAID', amount: AMOUNT }, 'refund', {
      held: { held: true, status: 'NEEDS_REVIEW' },
      requestRefund: async () => {
        throw ApplicationFailure.nonRetryable(
          'cannot refund a disputed payment',
          'ValidationError',
        );
      },
    });
    const input = lateInput();
    expect(await runLate(stubs, input)).toEqual({
      outcome: 'needs-review',
      donationStatus: 'NEEDS_REVIEW',
      reason: 'late-payment-refund-refused',
    });
    expect(stubs.argsOf('holdLateRefund')).toEqual([
      [input.donationId, 'late-payment-refund-refused'],
    ]);
    expect(stubs.names()).not.toContain('reversalOutcome');
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
    // Retried through an outage only while the provider still knows the idempotency key.
    const history = await env.client.workflow
      .getHandle(refundRequestWorkflowId(donationId, 'op-1'))
      .fetchHistory();
    const asked = history.events?.find(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'requestRefund',
    )?.activityTaskScheduledEventAttributes;
    expect(Number(asked?.scheduleToCloseTimeout?.seconds ?? 0)).toBe(12 * 60 * 60);
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

/** The claims about the ledger, on the real activities and Postgres: only the provider is scripted. */
describe('late payment workflow on the real ledger', () => {
  let env: TestWorkflowEnvironment;
  let real: Awaited<ReturnType<typeof ledgerActivities>>;
  let providerSays: { status: PaymentStatus; amount: number } = { status: 'PAID', amount: AMOUNT };

  beforeAll(async () => {
    env = await connectToDevServer();
    real = await ledgerActivities(() =>
      snapshot(REFERENCE, providerSays.status, providerSays.amount),
    );
  });
  afterAll(async () => {
    await real.close();
    await env.teardown();
  });

  const runLate = (seeded: { donationId: string; campaignId: string }) =>
    withWorker(env, real.activities, (taskQueue) =>
      env.client.workflow.execute<LatePaymentWorkflow>(WorkflowType.latePayment, {
        workflowId: latePaymentWorkflowId(seeded.donationId),
        taskQueue,
        args: [{ ...lateInput(), ...seeded }],
      }),
    );

  it('credits nothing when the provider says the payment is not paid', async () => {
    providerSays = { status: 'EXPIRED', amount: AMOUNT };
    const seeded = await seedDonation(real.db, AMOUNT, 'EXPIRED');
    await expect(runLate(seeded)).resolves.toEqual({
      outcome: 'not-paid',
      donationStatus: 'EXPIRED',
    });
    expect(await ledgerState(real.db, seeded.donationId, seeded.campaignId)).toEqual({
      entries: [],
      total: 0,
      status: 'EXPIRED',
    });
  });

  it('credits a late payment while the campaign still takes donations', async () => {
    providerSays = { status: 'PAID', amount: AMOUNT };
    const seeded = await seedDonation(real.db, AMOUNT, 'EXPIRED');
    await expect(runLate(seeded)).resolves.toEqual({
      outcome: 'credited',
      donationStatus: 'CONFIRMED',
    });
    const after = await ledgerState(real.db, seeded.donationId, seeded.campaignId);
    expect(after.entries.map((e) => [e.entry_type, e.amount])).toEqual([['DONATION', AMOUNT]]);
    expect(after.total).toBe(AMOUNT);
    expect(after.status).toBe('CONFIRMED');
  });

  it('leaves a late payment of another amount to review, crediting nothing', async () => {
    providerSays = { status: 'PAID', amount: AMOUNT - 1 };
    const seeded = await seedDonation(real.db, AMOUNT, 'EXPIRED');
    await expect(runLate(seeded)).resolves.toEqual({
      outcome: 'needs-review',
      donationStatus: 'NEEDS_REVIEW',
      reason: 'late-payment-amount-mismatch',
    });
    expect(await ledgerState(real.db, seeded.donationId, seeded.campaignId)).toEqual({
      entries: [],
      total: 0,
      status: 'NEEDS_REVIEW',
    });
  });

  it('credits, then refunds through a child request, a late payment to a closed campaign', async () => {
    providerSays = { status: 'PAID', amount: AMOUNT };
    const closed = { endsAt: new Date(Date.now() - 3_600_000) };
    const seeded = await seedDonation(real.db, AMOUNT, 'EXPIRED', closed);
    const before = real.refunds.length;
    // The refund's reversal posts it as the provider reports it succeeded.
    real.reversals.end = async (donationId, refundId) => {
      const posted = await real.deps.ledger.post(donationId, [
        { entryType: 'REFUND', externalRef: refundId, amount: AMOUNT },
      ]);
      return posted.refused === undefined ? 'posted' : 'needs-review';
    };
    await expect(runLate(seeded)).resolves.toEqual({
      outcome: 'refunded',
      donationStatus: 'REFUNDED',
    });
    const after = await ledgerState(real.db, seeded.donationId, seeded.campaignId);
    expect(after.entries.map((e) => [e.entry_type, e.amount])).toEqual([
      ['DONATION', AMOUNT],
      ['REFUND', -AMOUNT],
    ]);
    expect(after.total).toBe(0);
    expect(real.refunds.slice(before)).toEqual([
      {
        idempotencyKey: refundIdempotencyKey(seeded.donationId, 'late-payment'),
        providerReference: REFERENCE,
        amount: AMOUNT,
        currency: 'IDR',
        reason: 'late payment to a closed campaign',
      },
    ]);
    const handedOff = real.argsOf('followReversal').find(([ref]) => {
      return (ref as { donationId: string }).donationId === seeded.donationId;
    });
    expect(handedOff?.[1]).toMatchObject({ kind: 'refund', status: 'PENDING', amount: AMOUNT });
    const child = env.client.workflow.getHandle(
      refundRequestWorkflowId(seeded.donationId, 'late-payment'),
    );
    const description = await child.describe();
    expect(description.type).toBe(WorkflowType.refundRequest);
    expect(description.status.name).toBe('COMPLETED');
    expect(description.parentExecution?.workflowId).toBe(latePaymentWorkflowId(seeded.donationId));
  });

  it('holds in NEEDS_REVIEW a late payment to a closed campaign whose refund failed', async () => {
    providerSays = { status: 'PAID', amount: AMOUNT };
    const closed = { endsAt: new Date(Date.now() - 3_600_000) };
    const seeded = await seedDonation(real.db, AMOUNT, 'EXPIRED', closed);
    // The provider denied the refund: its reversal moved no money.
    real.reversals.end = async () => 'no-money-moved';
    await expect(runLate(seeded)).resolves.toEqual({
      outcome: 'needs-review',
      donationStatus: 'NEEDS_REVIEW',
      reason: 'late-payment-refund-failed',
    });
    const after = await ledgerState(real.db, seeded.donationId, seeded.campaignId);
    expect(after.entries.map((e) => [e.entry_type, e.amount])).toEqual([['DONATION', AMOUNT]]);
    expect(after.total).toBe(AMOUNT);
    expect(after.status).toBe('NEEDS_REVIEW');
    const row = await real.deps.donations.findById(seeded.donationId);
    expect(row?.failureReason).toBe('late-payment-refund-failed');
    // Only the money leaving ends the hold: part of it refunded keeps it, the rest releases it.
    const ledger = new LedgerRepository(real.db);
    const part = { entryType: 'REFUND', externalRef: 're_part', amount: AMOUNT / 5 } as const;
    await expect(ledger.post(seeded.donationId, [part])).resolves.toMatchObject({
      status: 'NEEDS_REVIEW',
      inserted: 1,
    });
    const rest = { entryType: 'REFUND', externalRef: 're_rest', amount: AMOUNT - part.amount };
    await expect(
      ledger.post(seeded.donationId, [{ ...rest, entryType: 'REFUND' }]),
    ).resolves.toMatchObject({ status: 'REFUNDED', inserted: 1 });
    const released = await real.deps.donations.findById(seeded.donationId);
    expect(released).toMatchObject({ status: 'REFUNDED', failureReason: null });
  });
});
