import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { LedgerRepository } from '../../src/ledger/ledger-repository';
import type { PostResult } from '../../src/ledger/ledger-repository';
import {
  WorkflowType,
  paymentReversalId,
  reversalEventSignal,
  reversalWorkflowId,
} from '../../workflows/contracts';
import type {
  DisputeEvent,
  DisputeStatus,
  DonationStatus,
  PaymentSnapshot,
  RefundEvent,
  RefundStatus,
  ReversalInput,
  ReversalWorkflow,
} from '../../workflows/contracts';
import { ledgerActivities, ledgerState, seedDonation } from '../support/ledger-activities';
import { connectToDevServer, recorded, snapshot, until, withWorker } from '../support/stub-worker';

const REFERENCE = 'pay_rev_1';
const AMOUNT = 10_000;

interface Script {
  /** What each postReversal call answers, in order; the last one repeats. */
  posts?: Partial<PostResult>[];
  /** What each fetchPayment call reads, in order; the last one repeats. */
  reads?: Partial<PaymentSnapshot>[];
  donationStatus?: DonationStatus;
  /** Whether the donation's money is in the ledger when its status is read. */
  credited?: boolean;
}

function reversalStubs(script: Script) {
  let posts = 0;
  let reads = 0;
  const nth = <T>(list: T[], i: number) => list[Math.min(i, list.length - 1)];
  return recorded({
    postReversal: async () => ({
      status: 'REFUNDED',
      inserted: 1,
      refused: undefined,
      overdrawn: false,
      campaignId: 'campaign-rev',
      ...nth(script.posts ?? [{}], posts++),
    }),
    donationStatus: async () => ({
      status: script.donationStatus ?? 'CONFIRMED',
      credited: script.credited ?? false,
    }),
    fetchPayment: async (_provider, reference) =>
      snapshot(reference, 'PAID', AMOUNT, nth(script.reads ?? [{}], reads++)),
  });
}

function refund(status: RefundStatus, refundId = 're_1', amount = AMOUNT): RefundEvent {
  return {
    kind: 'refund',
    eventKey: `evt-${randomUUID()}`,
    providerReference: REFERENCE,
    refundId,
    status,
    amount,
    currency: 'IDR',
    occurredAt: new Date().toISOString(),
  };
}

function dispute(status: DisputeStatus, disputeId = 'dp_1'): DisputeEvent {
  return {
    kind: 'dispute',
    eventKey: `evt-${randomUUID()}`,
    providerReference: REFERENCE,
    disputeId,
    status,
    amount: AMOUNT,
    currency: 'IDR',
    occurredAt: new Date().toISOString(),
  };
}

function reversalInput(event: RefundEvent | DisputeEvent, verifyWithProvider = false) {
  const input: ReversalInput = {
    donationId: randomUUID(),
    campaignId: 'campaign-rev',
    provider: 'simulator',
    providerReference: REFERENCE,
    verifyWithProvider,
    event,
  };
  const id = event.kind === 'refund' ? event.refundId : event.disputeId;
  return { input, workflowId: reversalWorkflowId(input.donationId, event.kind, id) };
}

describe('reversal workflow with stub activities', () => {
  let env: TestWorkflowEnvironment;

  beforeAll(async () => {
    env = await connectToDevServer();
  });
  afterAll(async () => {
    await env.teardown();
  });

  const start = (taskQueue: string, input: ReversalInput, workflowId: string) =>
    env.client.workflow.start<ReversalWorkflow>(WorkflowType.reversal, {
      workflowId,
      taskQueue,
      args: [input],
    });

  it('polls the provider for a pending refund until it succeeds', async () => {
    const stubs = reversalStubs({
      reads: [
        { refunds: [{ refundId: 're_1', status: 'PENDING', amount: AMOUNT }] },
        { refunds: [{ refundId: 're_1', status: 'SUCCEEDED', amount: AMOUNT }] },
      ],
    });
    const { input, workflowId } = reversalInput(refund('PENDING'));
    const result = await withWorker(env, stubs.activities, async (taskQueue) =>
      (await start(taskQueue, input, workflowId)).result(),
    );
    expect(result.outcome).toBe('posted');
    expect(stubs.names()).toEqual(['fetchPayment', 'fetchPayment', 'postReversal']);
    expect(stubs.argsOf('fetchPayment')).toEqual([
      ['simulator', REFERENCE],
      ['simulator', REFERENCE],
    ]);
    expect(stubs.argsOf('postReversal')[0]?.[1]).toEqual([
      { entryType: 'REFUND', externalRef: 're_1', amount: AMOUNT },
    ]);
  });

  it('posts as soon as a later notification says the refund succeeded', async () => {
    const stubs = reversalStubs({});
    const { input, workflowId } = reversalInput(refund('PENDING'));
    await withWorker(env, stubs.activities, async (taskQueue) => {
      const handle = await start(taskQueue, input, workflowId);
      await until(() => stubs.count('fetchPayment') > 0 || undefined);
      await handle.signal(reversalEventSignal, refund('SUCCEEDED'));
      await expect(handle.result()).resolves.toMatchObject({ outcome: 'posted' });
    });
    expect(stubs.names()).toEqual(['fetchPayment', 'fetchPayment', 'postReversal']);
  });

  it('reads a signed refund event back: a stale success of a refund since failed posts nothing', async () => {
    // Stripe: a Dashboard refund succeeded, then failed; its refund.created comes last.
    const stubs = reversalStubs({
      reads: [{ refunds: [{ refundId: 're_stale', status: 'FAILED', amount: 3_000 }] }],
      posts: [{ refused: 'nothing-to-undo', inserted: 0, status: 'CONFIRMED' }],
    });
    const { input, workflowId } = reversalInput(refund('SUCCEEDED', 're_stale'));
    const result = await withWorker(env, stubs.activities, async (taskQueue) =>
      (await start(taskQueue, input, workflowId)).result(),
    );
    expect(result).toEqual({ outcome: 'no-money-moved', donationStatus: 'CONFIRMED' });
    expect(stubs.argsOf('postReversal')).toEqual([
      [
        input.donationId,
        [{ entryType: 'REFUND_REVERSAL', externalRef: 're_stale', amount: 3_000 }],
      ],
    ]);
  });

  it('ends a failed refund the provider never booked, when it must verify', async () => {
    // Midtrans' bank denial: the refund request answered FAILED; refunds[] never lists it.
    const stubs = reversalStubs({
      posts: [{ refused: 'nothing-to-undo', inserted: 0, status: 'CONFIRMED' }],
    });
    const { input, workflowId } = reversalInput(refund('FAILED', 're_denied'), true);
    const result = await withWorker(env, stubs.activities, async (taskQueue) =>
      (await start(taskQueue, input, workflowId)).result(),
    );
    expect(result).toEqual({ outcome: 'no-money-moved', donationStatus: 'CONFIRMED' });
    expect(stubs.names()).toEqual(['fetchPayment', 'postReversal']);
  });

  it('moves no money for a failed refund with nothing to undo', async () => {
    const stubs = reversalStubs({
      posts: [{ refused: 'nothing-to-undo', inserted: 0, status: 'CONFIRMED' }],
    });
    const { input, workflowId } = reversalInput(refund('FAILED', 're_denied'));
    const result = await withWorker(env, stubs.activities, async (taskQueue) =>
      (await start(taskQueue, input, workflowId)).result(),
    );
    expect(result).toEqual({ outcome: 'no-money-moved', donationStatus: 'CONFIRMED' });
    expect(stubs.argsOf('postReversal')).toEqual([
      [
        input.donationId,
        [{ entryType: 'REFUND_REVERSAL', externalRef: 're_denied', amount: AMOUNT }],
      ],
    ]);
  });

  it('acts on the provider record, not the notification, when it must verify', async () => {
    // The notification says succeeded; the provider first does not know the refund, then says
    // it failed: the posting follows the provider.
    const stubs = reversalStubs({
      reads: [{}, { refunds: [{ refundId: 're_v', status: 'FAILED', amount: 3_000 }] }],
      posts: [{ refused: 'nothing-to-undo', inserted: 0, status: 'CONFIRMED' }],
    });
    const { input, workflowId } = reversalInput(refund('SUCCEEDED', 're_v'), true);
    const result = await withWorker(env, stubs.activities, async (taskQueue) =>
      (await start(taskQueue, input, workflowId)).result(),
    );
    expect(result.outcome).toBe('no-money-moved');
    expect(stubs.names()).toEqual(['fetchPayment', 'fetchPayment', 'postReversal']);
    expect(stubs.argsOf('postReversal')[0]?.[1]).toEqual([
      { entryType: 'REFUND_REVERSAL', externalRef: 're_v', amount: 3_000 },
    ]);
  });

  it('posts nothing for a stale DECLINED of a payment the provider shows paid', async () => {
    // A signed provider's old "declined" redelivered after the credit: no reversal happened.
    const stubs = reversalStubs({});
    const { input, workflowId } = reversalInput(dispute('LOST', paymentReversalId(REFERENCE)));
    const result = await withWorker(env, stubs.activities, async (taskQueue) =>
      (await start(taskQueue, input, workflowId)).result(),
    );
    expect(result).toEqual({ outcome: 'no-money-moved', donationStatus: 'CONFIRMED' });
    expect(stubs.names()).toEqual(['fetchPayment', 'donationStatus']);
  });

  it('posts the CHARGEBACK of an open dispute', async () => {
    const stubs = reversalStubs({ posts: [{ status: 'CHARGED_BACK' }] });
    const { input, workflowId } = reversalInput(dispute('OPEN'));
    const result = await withWorker(env, stubs.activities, async (taskQueue) =>
      (await start(taskQueue, input, workflowId)).result(),
    );
    expect(result).toEqual({ outcome: 'posted', donationStatus: 'CHARGED_BACK' });
    expect(stubs.argsOf('postReversal')).toEqual([
      [input.donationId, [{ entryType: 'CHARGEBACK', externalRef: 'dp_1', amount: AMOUNT }]],
    ]);
  });

  it('waits while the donation is open and not credited, then posts', async () => {
    const stubs = reversalStubs({
      posts: [{ refused: 'not-credited', inserted: 0, status: 'AWAITING_PAYMENT' }, {}],
      donationStatus: 'AWAITING_PAYMENT',
    });
    const { input, workflowId } = reversalInput(refund('SUCCEEDED'));
    const result = await withWorker(env, stubs.activities, async (taskQueue) =>
      (await start(taskQueue, input, workflowId)).result(),
    );
    expect(result).toEqual({ outcome: 'posted', donationStatus: 'REFUNDED' });
    expect(stubs.names()).toEqual([
      'fetchPayment',
      'postReversal',
      'donationStatus',
      'fetchPayment',
      'postReversal',
    ]);
    const [first, second] = stubs.argsOf('postReversal');
    expect(second).toEqual(first);
  });

  it('posts again when the donation was credited after its post looked', async () => {
    const stubs = reversalStubs({
      posts: [{ refused: 'not-credited', inserted: 0, status: 'CONFIRMED' }, {}],
      donationStatus: 'CONFIRMED',
      credited: true,
    });
    const { input, workflowId } = reversalInput(refund('SUCCEEDED'));
    const result = await withWorker(env, stubs.activities, async (taskQueue) =>
      (await start(taskQueue, input, workflowId)).result(),
    );
    expect(result).toEqual({ outcome: 'posted', donationStatus: 'REFUNDED' });
    expect(stubs.names()).toEqual([
      'fetchPayment',
      'postReversal',
      'donationStatus',
      'fetchPayment',
      'postReversal',
    ]);
  });
});

/** The claims about the ledger, on the real activities and Postgres: only the provider is scripted. */
describe('reversal workflow on the real ledger', () => {
  let env: TestWorkflowEnvironment;
  let real: Awaited<ReturnType<typeof ledgerActivities>>;

  beforeAll(async () => {
    env = await connectToDevServer();
    real = await ledgerActivities(() => snapshot(REFERENCE, 'PAID', AMOUNT));
  });
  afterAll(async () => {
    await real.close();
    await env.teardown();
  });

  const reverse = async (
    seeded: { donationId: string; campaignId: string },
    event: RefundEvent | DisputeEvent,
  ) => {
    const input: ReversalInput = { ...reversalInput(event).input, ...seeded };
    const id = event.kind === 'refund' ? event.refundId : event.disputeId;
    return withWorker(env, real.activities, (taskQueue) =>
      env.client.workflow.execute<ReversalWorkflow>(WorkflowType.reversal, {
        workflowId: reversalWorkflowId(seeded.donationId, event.kind, id),
        taskQueue,
        args: [input],
      }),
    );
  };

  it('posts the REFUND of a succeeded refund and lowers the total by it', async () => {
    const seeded = await seedDonation(real.db, AMOUNT, 'CONFIRMED');
    const result = await reverse(seeded, refund('SUCCEEDED', 're_ok', 4_000));
    expect(result).toEqual({ outcome: 'posted', donationStatus: 'PARTIALLY_REFUNDED' });
    const after = await ledgerState(real.db, seeded.donationId, seeded.campaignId);
    expect(after.entries.map((e) => [e.entry_type, e.amount])).toEqual([
      ['DONATION', AMOUNT],
      ['REFUND', -4_000],
    ]);
    expect(after.entries[1]?.external_ref).toBe('re_ok');
    expect(after.total).toBe(AMOUNT - 4_000);
    expect(after.status).toBe('PARTIALLY_REFUNDED');
  });

  it('posts CHARGEBACK then CHARGEBACK_REVERSAL for a dispute won: the total ends where it was', async () => {
    const seeded = await seedDonation(real.db, AMOUNT, 'CONFIRMED');
    const result = await reverse(seeded, dispute('WON', 'dp_won'));
    expect(result).toEqual({ outcome: 'posted', donationStatus: 'CONFIRMED' });
    const after = await ledgerState(real.db, seeded.donationId, seeded.campaignId);
    expect(after.entries.map((e) => [e.entry_type, e.amount])).toEqual([
      ['DONATION', AMOUNT],
      ['CHARGEBACK', -AMOUNT],
      ['CHARGEBACK_REVERSAL', AMOUNT],
    ]);
    expect(after.total).toBe(AMOUNT);
  });

  it('leaves a reversal larger than the net to review and the ledger as it was', async () => {
    const seeded = await seedDonation(real.db, AMOUNT, 'CONFIRMED');
    const result = await reverse(seeded, refund('SUCCEEDED', 're_big', AMOUNT * 2));
    expect(result).toEqual({ outcome: 'needs-review', donationStatus: 'CONFIRMED' });
    const after = await ledgerState(real.db, seeded.donationId, seeded.campaignId);
    expect(after.entries.map((e) => e.entry_type)).toEqual(['DONATION']);
    expect(after.total).toBe(AMOUNT);
    expect(after.status).toBe('CONFIRMED');
  });

  it('keeps a donation held for an unstated chargeback in review when a refund posts after it', async () => {
    const seeded = await seedDonation(real.db, AMOUNT, 'CONFIRMED');
    const partial: DisputeEvent = { ...dispute('OPEN', 'dp_unstated'), amount: 0 };
    const held = await reverse(seeded, { ...partial, amountUnstated: true });
    expect(held).toEqual({ outcome: 'needs-review', donationStatus: 'NEEDS_REVIEW' });

    // Money the bank took is still unmeasured: a refund's entry must not end the review.
    const refunded = await reverse(seeded, refund('SUCCEEDED', 're_after_hold', 3_000));
    expect(refunded).toEqual({ outcome: 'posted', donationStatus: 'NEEDS_REVIEW' });
    expect((await ledgerState(real.db, seeded.donationId, seeded.campaignId)).status).toBe(
      'NEEDS_REVIEW',
    );

    // The whole chargeback states the amount: the status follows the net again.
    const whole = { ...dispute('OPEN', 'dp_unstated'), amount: AMOUNT - 3_000 };
    const stated = await withWorker(env, real.activities, (taskQueue) =>
      env.client.workflow.execute<ReversalWorkflow>(WorkflowType.reversal, {
        workflowId: `${reversalWorkflowId(seeded.donationId, 'dispute', 'dp_unstated')}-whole`,
        taskQueue,
        args: [{ ...reversalInput(whole).input, ...seeded }],
      }),
    );
    expect(stated).toEqual({ outcome: 'posted', donationStatus: 'CHARGED_BACK' });
    const after = await ledgerState(real.db, seeded.donationId, seeded.campaignId);
    expect(after.entries.map((e) => [e.entry_type, e.amount])).toEqual([
      ['DONATION', AMOUNT],
      ['REFUND', -3_000],
      ['CHARGEBACK', -(AMOUNT - 3_000)],
    ]);
    expect(after.status).toBe('CHARGED_BACK');
    expect(after.total).toBe(0);
  });

  it('leaves a reversal of an uncredited donation held for review to review, posting nothing', async () => {
    // Paid another amount, say: no credit will come but an operator's (seed 2025831177 case 3).
    const seeded = await seedDonation(real.db, AMOUNT, 'NEEDS_REVIEW');
    const result = await reverse(seeded, refund('SUCCEEDED', 're_review'));
    expect(result).toEqual({ outcome: 'needs-review', donationStatus: 'NEEDS_REVIEW' });
    expect(await ledgerState(real.db, seeded.donationId, seeded.campaignId)).toEqual({
      entries: [],
      total: 0,
      status: 'NEEDS_REVIEW',
    });
  });

  it('waits for the late credit of a donation closed without money, then posts its refund', async () => {
    // The refund proves the money came in: a late payment is on its way to credit it (the
    // simulator's case 72: declined, then paid, refunded before the late credit).
    const seeded = await seedDonation(real.db, AMOUNT, 'EXPIRED');
    const reversal = reverse(seeded, refund('SUCCEEDED', 're_late'));
    await until(() => real.count('donationStatus') > 0 || undefined, 10_000);
    await new LedgerRepository(real.db).confirm(seeded.donationId, { late: true });
    await expect(reversal).resolves.toEqual({ outcome: 'posted', donationStatus: 'REFUNDED' });
    expect(await ledgerState(real.db, seeded.donationId, seeded.campaignId)).toEqual({
      entries: [
        { entry_type: 'DONATION', external_ref: '', amount: AMOUNT },
        { entry_type: 'REFUND', external_ref: 're_late', amount: -AMOUNT },
      ],
      total: 0,
      status: 'REFUNDED',
    });
  });
});
