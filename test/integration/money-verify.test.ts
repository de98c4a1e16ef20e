import { randomUUID } from 'node:crypto';
import { donationWorkflowId } from '../../workflows/contracts';
import { getStateQuery, reversalWorkflowId } from '../../workflows/contracts';
import { waitForStatus, workflowResult } from '../support/donations';
import {
  completedActivities,
  ledgerOf,
  ledgerWith,
  paymentOf,
  rowOf,
  runningWorkflow,
  sendSimulatorNotification,
} from '../support/money';
import { donate } from '../support/reconciliation';
import { createCampaign, eventually, startStack } from '../support/stack';
import type { Stack } from '../support/stack';

/**
 * Issue 12, defect 6: for a provider whose notifications cannot prove themselves (Midtrans signs
 * order id, status code and amount but not `transaction_status`; Xendit sends a static token),
 * every notification is only a hint. The simulator stands in for one here (`verifyWithProvider`)
 * and the test sends it bodies anyone holding one captured notification could make: a
 * settlement replayed as cancel or deny, refunds and disputes the provider never made.
 */
describe('a verify-before-credit provider', () => {
  let stack: Stack;
  let campaignId: string;

  beforeAll(async () => {
    stack = await startStack({
      autoPayMs: -1,
      paymentTimeoutSeconds: 60,
      verifyWithProvider: true,
    });
  });
  beforeEach(async () => {
    campaignId = await createCampaign(stack.db);
  });
  afterAll(async () => {
    await stack.stop();
  });

  /** A notification about the donation's payment, validly signed, saying what the test wants. */
  async function claim(
    type: 'payment.updated' | 'refund.updated' | 'dispute.updated',
    donationId: string,
    paymentId: string,
    data: { id?: string; status: string; amount: number },
  ) {
    const sent = await sendSimulatorNotification(stack, {
      type,
      data: {
        id: data.id ?? paymentId,
        ...(type === 'payment.updated' ? { refunded_amount: 0 } : { payment_id: paymentId }),
        reference: donationId,
        status: data.status,
        amount: data.amount,
        currency: 'IDR',
        occurred_at: new Date().toISOString(),
      },
    });
    expect(sent.status).toBe(200);
  }

  it('ends nothing on a cancel or a deny the status API does not confirm', async () => {
    const id = await donate(stack, campaignId, 50_000);
    const payment = await paymentOf(stack, id);
    const handle = stack.temporal.workflow.getHandle(donationWorkflowId(id));

    await claim('payment.updated', id, payment, { status: 'canceled', amount: 50_000 });
    await claim('payment.updated', id, payment, { status: 'declined', amount: 50_000 });
    // Both were taken as hints and checked with the provider after the last one came.
    const state = await eventually(async () => {
      const s = await handle.query(getStateQuery);
      const events = s.timeline.map((t) => t.event);
      const hinted = events.filter((e) => e === 'payment-event-to-verify').length;
      const asked = events.findLastIndex((e) => e.startsWith('provider-status'));
      return hinted === 2 && asked > events.lastIndexOf('payment-event-to-verify') ? s : undefined;
    });
    expect(state.status).toBe('AWAITING_PAYMENT');
    expect(state.payment?.status).toBe('PENDING');
    expect((await rowOf(stack, id)).status).toBe('AWAITING_PAYMENT');
    expect(stack.simulator.payment(payment)?.status).toBe('pending');

    stack.simulator.transition(payment, 'settled');
    expect(await workflowResult(stack, id)).toMatchObject({ status: 'CONFIRMED', credited: true });
    expect(await ledgerOf(stack, id)).toEqual([
      { entry_type: 'DONATION', external_ref: '', amount: 50_000 },
    ]);
  });

  it('reverses nothing for refunds and disputes until the status API shows them', async () => {
    const id = await donate(stack, campaignId, 50_000, { refundSettleMs: -1 });
    const payment = await paymentOf(stack, id);
    stack.simulator.transition(payment, 'settled');
    expect(await workflowResult(stack, id)).toMatchObject({ status: 'CONFIRMED' });
    const forged: string[] = [];
    try {
      // A refund and a dispute the provider never made.
      const refundId = `sre_${randomUUID()}`;
      const disputeId = `sdp_${randomUUID()}`;
      await claim('refund.updated', id, payment, {
        id: refundId,
        status: 'succeeded',
        amount: 50_000,
      });
      await claim('dispute.updated', id, payment, {
        id: disputeId,
        status: 'lost',
        amount: 50_000,
      });
      forged.push(
        reversalWorkflowId(id, 'refund', refundId),
        reversalWorkflowId(id, 'dispute', disputeId),
      );
      for (const workflowId of forged) {
        await runningWorkflow(stack, workflowId);
        await eventually(async () =>
          (await completedActivities(stack, workflowId, 'fetchPayment')) > 0 ? true : undefined,
        );
      }

      // A real refund, still pending, claimed as succeeded by an edited copy of its notification.
      const refund = stack.simulator.refundAtProvider(payment, 20_000);
      const real = reversalWorkflowId(id, 'refund', refund.id);
      await runningWorkflow(stack, real);
      const asked = await completedActivities(stack, real, 'fetchPayment');
      await claim('refund.updated', id, payment, {
        id: refund.id,
        status: 'succeeded',
        amount: 20_000,
      });
      await eventually(async () =>
        (await completedActivities(stack, real, 'fetchPayment')) > asked ? true : undefined,
      );
      expect(await ledgerOf(stack, id)).toEqual([
        { entry_type: 'DONATION', external_ref: '', amount: 50_000 },
      ]);
      expect((await rowOf(stack, id)).status).toBe('CONFIRMED');

      // The provider settles it: now, and only now, the money moves.
      stack.simulator.settleRefund(refund.id, 'succeeded');
      await waitForStatus(stack, id, 'PARTIALLY_REFUNDED');
      expect(await ledgerWith(stack, id, 2)).toEqual([
        { entry_type: 'DONATION', external_ref: '', amount: 50_000 },
        { entry_type: 'REFUND', external_ref: refund.id, amount: -20_000 },
      ]);
      for (const workflowId of forged) {
        const described = await stack.temporal.workflow.getHandle(workflowId).describe();
        expect(described.status.name).toBe('RUNNING');
      }
    } finally {
      // Forged ones would be followed for days.
      for (const workflowId of forged) {
        await stack.temporal.workflow
          .getHandle(workflowId)
          .terminate('test: forged')
          .catch(() => undefined);
      }
    }
  });
});
