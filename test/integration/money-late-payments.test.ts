import { refundIdempotencyKey } from '../../src/providers/refund-keys';
import type { Client } from '@temporalio/client';
import { DonationRepository } from '../../src/donations/donation-repository';
import { FollowUpWorkflows } from '../../src/donations/follow-up-workflows';
import { WebhookDelivery } from '../../src/webhooks/webhook-delivery';
import { donationWorkflowId } from '../../workflows/contracts';
import { runReconciliationNow } from '../../src/reconciliation/reconciliation-schedule';
import { WebhookInboxRepository } from '../../src/webhooks/webhook-inbox-repository';
import { getStateQuery, latePaymentWorkflowId } from '../../workflows/contracts';
import type { LatePaymentResult } from '../../workflows/contracts';
import { totalsOf, waitForStatus, workflowResult } from '../support/donations';
import {
  closedResult,
  holdingRow,
  ledgerEntry,
  ledgerOf,
  ledgerWith,
  paymentOf,
  processedEvent,
  rowOf,
} from '../support/money';
import { donate } from '../support/reconciliation';
import { createCampaign, eventually, startStack } from '../support/stack';
import type { Stack } from '../support/stack';

/**
 * Issue 12, defect 3: a success is never lost. The donation expires only once the provider
 * says the payment can no longer succeed; a payment the provider would not close is checked
 * until a horizon; a PAID for a donation closed without money is verified and credited, or
 * refunded when the campaign can no longer take it. Payments time out after 2 s here and the
 * horizon is 8 s past that (config), so each path runs in seconds.
 */
const SETTINGS = { autoPayMs: -1, paymentTimeoutSeconds: 2 };
const HORIZON = { PAYMENT_SETTLE_HORIZON_SECONDS: '8' };

describe('late payments', () => {
  let stack: Stack;
  let campaignId: string;

  beforeAll(async () => {
    stack = await startStack({ ...SETTINGS, env: HORIZON });
  });
  beforeEach(async () => {
    campaignId = await createCampaign(stack.db);
  });
  afterAll(async () => {
    await stack.stop();
  });

  /** Waits until the workflow has tried to close the payment at its deadline. */
  const pastTheCancel = (id: string) =>
    eventually(async () => {
      const state = await stack.temporal.workflow
        .getHandle(donationWorkflowId(id))
        .query(getStateQuery);
      return state.timeline.some((t) => t.event.startsWith('cancel')) ? state : undefined;
    });

  it('keeps checking a payment the provider would not cancel, and credits it when it settles', async () => {
    const id = await donate(stack, campaignId, 45_000, { autoPayMs: 0, processingMs: -1 });
    const payment = await paymentOf(stack, id);

    const state = await pastTheCancel(id);
    // Refused while processing: not expired, still waiting (and listening).
    expect(state.status).toBe('AWAITING_PAYMENT');
    expect(stack.simulator.payment(payment)?.status).toBe('processing');
    const handle = stack.temporal.workflow.getHandle(donationWorkflowId(id));
    expect((await handle.describe()).status.name).toBe('RUNNING');
    expect((await rowOf(stack, id)).status).toBe('AWAITING_PAYMENT');

    stack.simulator.transition(payment, 'settled');
    expect(await handle.result()).toMatchObject({ status: 'CONFIRMED', credited: true });
    expect(await ledgerOf(stack, id)).toEqual([ledgerEntry('DONATION', '', 45_000)]);
    expect(await totalsOf(stack, campaignId)).toEqual({
      confirmed_amount: 45_000,
      donation_count: 1,
    });
    expect(stack.simulator.chargeCount(`${id}:create`)).toBe(1);
  });

  it('sends a payment still unsettled at the horizon to review, and credits it when it settles', async () => {
    const id = await donate(stack, campaignId, 15_000, { autoPayMs: 0, processingMs: -1 });
    const payment = await paymentOf(stack, id);
    expect(await workflowResult(stack, id)).toMatchObject({
      status: 'NEEDS_REVIEW',
      credited: false,
    });
    expect(await rowOf(stack, id)).toMatchObject({
      status: 'NEEDS_REVIEW',
      failure_reason: 'payment-unsettled-after-horizon',
    });
    expect(await ledgerOf(stack, id)).toEqual([]);

    stack.simulator.transition(payment, 'settled');
    expect(await closedResult<LatePaymentResult>(stack, latePaymentWorkflowId(id))).toEqual({
      outcome: 'credited',
      donationStatus: 'CONFIRMED',
    });
    expect(await ledgerOf(stack, id)).toEqual([ledgerEntry('DONATION', '', 15_000)]);
  });

  it('credits a payment that succeeds after its donation expired, while the campaign is open', async () => {
    const id = await donate(stack, campaignId, 35_000);
    const payment = await paymentOf(stack, id);
    expect(await workflowResult(stack, id)).toMatchObject({ status: 'EXPIRED', credited: false });
    expect(stack.simulator.payment(payment)?.status).toBe('canceled');

    // The bank reports a success after all.
    stack.simulator.transition(payment, 'settled');
    expect(await closedResult<LatePaymentResult>(stack, latePaymentWorkflowId(id))).toEqual({
      outcome: 'credited',
      donationStatus: 'CONFIRMED',
    });
    expect(await processedEvent(stack, id, { kind: 'payment', status: 'PAID' })).toMatchObject({
      last_error: `late-payment:${latePaymentWorkflowId(id)}`,
    });
    expect((await rowOf(stack, id)).status).toBe('CONFIRMED');
    expect(await ledgerOf(stack, id)).toEqual([ledgerEntry('DONATION', '', 35_000)]);
    expect(await totalsOf(stack, campaignId)).toEqual({
      confirmed_amount: 35_000,
      donation_count: 1,
    });
    expect(stack.simulator.chargeCount(`${id}:create`)).toBe(1);
  });

  it('lets a success that was not paid yet when first checked be credited when it is', async () => {
    // A forged or early hint: the late-payment workflow reads the provider and finds no money.
    const id = await donate(stack, campaignId, 30_000);
    const payment = await paymentOf(stack, id);
    expect(await workflowResult(stack, id)).toMatchObject({ status: 'EXPIRED', credited: false });
    const followUps = new FollowUpWorkflows(stack.temporal, stack.config.temporal.taskQueue);
    const ref = {
      donationId: id,
      campaignId,
      provider: 'simulator',
      providerReference: payment,
      verifyWithProvider: false,
    };
    const hint = {
      kind: 'payment' as const,
      eventKey: `early-${id}`,
      providerReference: payment,
      status: 'PAID' as const,
      amount: 30_000,
      currency: 'IDR',
      occurredAt: new Date().toISOString(),
    };
    await followUps.startLatePayment({ ...ref, event: hint, amount: 30_000, currency: 'IDR' });
    expect(await closedResult<LatePaymentResult>(stack, latePaymentWorkflowId(id))).toEqual({
      outcome: 'not-paid',
      donationStatus: 'EXPIRED',
    });

    // The real success comes later, through the provider's notification.
    stack.simulator.transition(payment, 'settled');
    await waitForStatus(stack, id, 'CONFIRMED');
    expect(await ledgerOf(stack, id)).toEqual([ledgerEntry('DONATION', '', 30_000)]);
    expect(await totalsOf(stack, campaignId)).toEqual({
      confirmed_amount: 30_000,
      donation_count: 1,
    });
  });

  it('refunds in full a payment that succeeds after expiry once the campaign has closed', async () => {
    const id = await donate(stack, campaignId, 35_000);
    const payment = await paymentOf(stack, id);
    expect(await workflowResult(stack, id)).toMatchObject({ status: 'EXPIRED' });
    await stack.db
      .updateTable('campaigns')
      .set({ status: 'CLOSED' })
      .where('id', '=', campaignId)
      .execute();

    stack.simulator.transition(payment, 'settled');
    expect(await closedResult<LatePaymentResult>(stack, latePaymentWorkflowId(id))).toMatchObject({
      outcome: 'refunded',
    });
    await waitForStatus(stack, id, 'REFUNDED');
    const refunds = stack.simulator.payment(payment)?.refunds ?? [];
    expect(refunds).toEqual([expect.objectContaining({ status: 'succeeded', amount: 35_000 })]);
    expect(stack.simulator.refundCount(refundIdempotencyKey(id, 'late-payment'))).toBe(1);
    expect(await ledgerWith(stack, id, 2)).toEqual([
      ledgerEntry('DONATION', '', 35_000),
      ledgerEntry('REFUND', refunds[0]?.id ?? '', -35_000),
    ]);
    expect(await totalsOf(stack, campaignId)).toEqual({ confirmed_amount: 0, donation_count: 0 });
  });

  it.each([
    ['denies', { refundOutcome: 'denied' as const }],
    ['fails', { refundOutcome: 'failed' as const, refundSettleMs: 0 }],
  ])(
    'holds in NEEDS_REVIEW a late payment to a closed campaign whose refund the provider %s',
    async (_, refundPlan) => {
      const id = await donate(stack, campaignId, 35_000, refundPlan);
      const payment = await paymentOf(stack, id);
      expect(await workflowResult(stack, id)).toMatchObject({ status: 'EXPIRED' });
      await stack.db
        .updateTable('campaigns')
        .set({ status: 'CLOSED' })
        .where('id', '=', campaignId)
        .execute();

      stack.simulator.transition(payment, 'settled');
      expect(await closedResult<LatePaymentResult>(stack, latePaymentWorkflowId(id))).toEqual({
        outcome: 'needs-review',
        donationStatus: 'NEEDS_REVIEW',
        reason: 'late-payment-refund-failed',
      });
      const refunds = stack.simulator.payment(payment)?.refunds ?? [];
      expect(refunds).toEqual([expect.objectContaining({ status: 'failed', amount: 35_000 })]);
      expect(await rowOf(stack, id)).toMatchObject({
        status: 'NEEDS_REVIEW',
        failure_reason: 'late-payment-refund-failed',
      });
      // Credited and not given back: the money stays visible in the ledger and the total.
      expect(await ledgerOf(stack, id)).toEqual([ledgerEntry('DONATION', '', 35_000)]);
      expect(await totalsOf(stack, campaignId)).toEqual({
        confirmed_amount: 35_000,
        donation_count: 1,
      });
    },
  );

  it('takes a success that arrives while the decline is being recorded', async () => {
    const id = await donate(stack, campaignId, 25_000);
    const payment = await paymentOf(stack, id);
    await holdingRow(stack, id, async (blocked) => {
      stack.simulator.transition(payment, 'declined');
      // The workflow is ending the donation as FAILED and waits for the row.
      await blocked();
      stack.simulator.transition(payment, 'settled');
      await processedEvent(stack, id, { kind: 'payment', status: 'PAID' });
    });
    await waitForStatus(stack, id, 'CONFIRMED');
    expect(await ledgerOf(stack, id)).toEqual([ledgerEntry('DONATION', '', 25_000)]);
    expect(await totalsOf(stack, campaignId)).toEqual({
      confirmed_amount: 25_000,
      donation_count: 1,
    });
    expect(stack.simulator.chargeCount(`${id}:create`)).toBe(1);
  });

  it('takes a success signalled to a workflow that is closing past its last look', async () => {
    const id = await donate(stack, campaignId, 30_000, { dropWebhooks: true });
    const payment = await paymentOf(stack, id);
    expect(await workflowResult(stack, id)).toMatchObject({ status: 'EXPIRED' });
    stack.simulator.transition(payment, 'settled');
    // Temporal takes the signal (the workflow is still open) but the workflow never reads it:
    // its ending is decided and recorded, it is completing.
    const closing = {
      workflow: { getHandle: () => ({ signal: () => Promise.resolve() }) },
      connection: { withDeadline: <T>(_deadline: number, fn: () => Promise<T>) => fn() },
    } as unknown as Client;
    const inbox = new WebhookInboxRepository(stack.db);
    const delivery = new WebhookDelivery({
      inbox,
      donations: new DonationRepository(stack.db),
      providers: stack.providers,
      temporal: closing,
      followUps: new FollowUpWorkflows(stack.temporal, stack.config.temporal.taskQueue),
    });
    const event = {
      kind: 'payment' as const,
      eventKey: `closing-${id}`,
      donationRef: id,
      providerReference: payment,
      status: 'PAID' as const,
      amount: 30_000,
      currency: 'IDR',
      occurredAt: new Date().toISOString(),
    };
    const recorded = await inbox.insert('simulator', event, '{}');
    const entry = {
      id: recorded?.id ?? '',
      provider: 'simulator',
      eventKey: event.eventKey,
      donationId: id,
      event,
      correlationId: null,
      receivedAt: new Date(),
    };

    expect(await delivery.deliver(entry, { warn: () => undefined }, 'request')).toBe('delivered');
    expect(await closedResult<LatePaymentResult>(stack, latePaymentWorkflowId(id))).toEqual({
      outcome: 'credited',
      donationStatus: 'CONFIRMED',
    });
    expect(await ledgerOf(stack, id)).toEqual([ledgerEntry('DONATION', '', 30_000)]);
  });

  it('has reconciliation apply a recorded success that no delivery applied', async () => {
    // The notification was recorded but its delivery raced the donation's end (the API crashed
    // between the two, say); the provider's own notifications are lost.
    const id = await donate(stack, campaignId, 40_000, { dropWebhooks: true });
    const payment = await paymentOf(stack, id);
    expect(await workflowResult(stack, id)).toMatchObject({ status: 'EXPIRED' });
    stack.simulator.transition(payment, 'settled');
    const inbox = new WebhookInboxRepository(stack.db);
    const recorded = await inbox.insert(
      'simulator',
      {
        kind: 'payment',
        eventKey: `unapplied-${id}`,
        donationRef: id,
        providerReference: payment,
        status: 'PAID',
        amount: 40_000,
        currency: 'IDR',
        occurredAt: new Date().toISOString(),
      },
      '{}',
    );
    expect(recorded?.donationId).toBe(id);
    await inbox.markProcessed(recorded?.id ?? '', 'workflow-closed');
    // Older than reconciliation's grace: the donation's own workflow had its chance.
    await stack.db
      .updateTable('webhook_inbox')
      .set({ received_at: new Date(Date.now() - 3_600_000) })
      .where('id', '=', recorded?.id ?? '')
      .execute();

    const report = await runReconciliationNow(stack.temporal, stack.config.temporal.taskQueue);

    expect(report.stuckRestarted).toContainEqual(
      expect.objectContaining({ donationId: id, action: 'late-payment' }),
    );
    expect(await closedResult<LatePaymentResult>(stack, latePaymentWorkflowId(id))).toEqual({
      outcome: 'credited',
      donationStatus: 'CONFIRMED',
    });
    expect(await ledgerOf(stack, id)).toEqual([ledgerEntry('DONATION', '', 40_000)]);
    expect(await totalsOf(stack, campaignId)).toEqual({
      confirmed_amount: 40_000,
      donation_count: 1,
    });
  });

  it('takes a success the provider reports after the donation failed on a decline', async () => {
    const id = await donate(stack, campaignId, 20_000);
    const payment = await paymentOf(stack, id);
    stack.simulator.transition(payment, 'declined');
    expect(await workflowResult(stack, id)).toMatchObject({ status: 'FAILED', credited: false });

    stack.simulator.transition(payment, 'settled');
    expect(await closedResult<LatePaymentResult>(stack, latePaymentWorkflowId(id))).toEqual({
      outcome: 'credited',
      donationStatus: 'CONFIRMED',
    });
    expect(await ledgerOf(stack, id)).toEqual([ledgerEntry('DONATION', '', 20_000)]);
  });
});

describe('late payments under LATE_PAYMENT_POLICY=refund', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ ...SETTINGS, env: { LATE_PAYMENT_POLICY: 'refund' } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  it('refunds a late success even though the campaign is open', async () => {
    const campaignId = await createCampaign(stack.db);
    const id = await donate(stack, campaignId, 30_000);
    const payment = await paymentOf(stack, id);
    expect(await workflowResult(stack, id)).toMatchObject({ status: 'EXPIRED' });

    stack.simulator.transition(payment, 'settled');
    expect(await closedResult<LatePaymentResult>(stack, latePaymentWorkflowId(id))).toMatchObject({
      outcome: 'refunded',
    });
    await waitForStatus(stack, id, 'REFUNDED');
    const refunds = stack.simulator.payment(payment)?.refunds ?? [];
    expect(refunds).toEqual([expect.objectContaining({ status: 'succeeded', amount: 30_000 })]);
    expect(await ledgerWith(stack, id, 2)).toEqual([
      ledgerEntry('DONATION', '', 30_000),
      ledgerEntry('REFUND', refunds[0]?.id ?? '', -30_000),
    ]);
    expect(await totalsOf(stack, campaignId)).toEqual({ confirmed_amount: 0, donation_count: 0 });
  });
});
