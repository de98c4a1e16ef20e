import { randomUUID } from 'node:crypto';
import type { PaymentPlan } from '../../src/providers/simulator/simulator-server';
import { reversalWorkflowId } from '../../workflows/contracts';
import type { RefundRequestResult, ReversalResult } from '../../workflows/contracts';
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
  runningWorkflow,
} from '../support/money';
import { donate } from '../support/reconciliation';
import { OPERATOR_SECRET, createCampaign, startStack } from '../support/stack';
import type { Stack } from '../support/stack';

/**
 * Issue 12, defects 2, 4 and 5: money goes back exactly as the provider moved it. Each refund and
 * dispute is its own ledger entry with the provider's amount, posted once the provider reports
 * it final; the donation's status and the campaign's total follow the net.
 */
describe('reversals follow the provider', () => {
  let stack: Stack;
  let campaignId: string;

  beforeAll(async () => {
    stack = await startStack({ autoPayMs: 100, paymentTimeoutSeconds: 30 });
  });
  beforeEach(async () => {
    campaignId = await createCampaign(stack.db);
  });
  afterAll(async () => {
    await stack.stop();
  });

  /** A donation paid and credited; its id and its payment's id at the simulator. */
  async function credited(amount: number, plan: PaymentPlan = {}) {
    const id = await donate(stack, campaignId, amount, plan);
    expect(await workflowResult(stack, id)).toMatchObject({ status: 'CONFIRMED' });
    return { id, payment: await paymentOf(stack, id) };
  }

  it('posts each partial refund made at the provider after close as its own entry, then the rest', async () => {
    const { id, payment } = await credited(40_000);

    const first = stack.simulator.refundAtProvider(payment, 15_000);
    await waitForStatus(stack, id, 'PARTIALLY_REFUNDED');
    expect(await ledgerWith(stack, id, 2)).toEqual([
      ledgerEntry('DONATION', '', 40_000),
      ledgerEntry('REFUND', first.id, -15_000),
    ]);
    expect(await totalsOf(stack, campaignId)).toEqual({
      confirmed_amount: 25_000,
      donation_count: 1,
    });

    const second = stack.simulator.refundAtProvider(payment, 10_000);
    expect((await ledgerWith(stack, id, 3))[2]).toEqual(ledgerEntry('REFUND', second.id, -10_000));
    expect((await rowOf(stack, id)).status).toBe('PARTIALLY_REFUNDED');
    expect(await totalsOf(stack, campaignId)).toEqual({
      confirmed_amount: 15_000,
      donation_count: 1,
    });

    const rest = stack.simulator.refundAtProvider(payment, 15_000);
    await waitForStatus(stack, id, 'REFUNDED');
    expect(await ledgerOf(stack, id)).toEqual([
      ledgerEntry('DONATION', '', 40_000),
      ledgerEntry('REFUND', first.id, -15_000),
      ledgerEntry('REFUND', second.id, -10_000),
      ledgerEntry('REFUND', rest.id, -15_000),
    ]);
    expect(await totalsOf(stack, campaignId)).toEqual({ confirmed_amount: 0, donation_count: 0 });
    expect(stack.simulator.payment(payment)?.refunded_amount).toBe(40_000);
  });

  /**
   * Lets the payment settle while the donation's row is held, so the workflow's confirmDonation
   * waits; runs `meanwhile` with the provider and waits until its notification was handed on.
   */
  async function whileConfirming(
    amount: number,
    meanwhile: (payment: string) => string,
    delivered: (id: string, refundOrDispute: string) => Promise<unknown>,
  ) {
    const id = await donate(stack, campaignId, amount, { autoPayMs: -1 });
    const payment = await paymentOf(stack, id);
    return holdingRow(stack, id, async (blocked) => {
      stack.simulator.transition(payment, 'settled');
      await blocked();
      const external = meanwhile(payment);
      await delivered(id, external);
      expect((await rowOf(stack, id)).status).toBe('AWAITING_PAYMENT');
      return { id, payment, external };
    });
  }

  it('reverses a refund that arrives while the donation is being confirmed', async () => {
    const { id, external: refundId } = await whileConfirming(
      40_000,
      (payment) => stack.simulator.refundAtProvider(payment, 15_000).id,
      (donationId, refundId) =>
        processedEvent(stack, donationId, { kind: 'refund', status: 'SUCCEEDED', refundId }),
    );
    // Credited once; its outcome shows the status at its end, which the refund may have moved.
    expect(await workflowResult(stack, id)).toMatchObject({ credited: true });
    await waitForStatus(stack, id, 'PARTIALLY_REFUNDED');
    expect(await ledgerOf(stack, id)).toEqual([
      ledgerEntry('DONATION', '', 40_000),
      ledgerEntry('REFUND', refundId, -15_000),
    ]);
    expect(await totalsOf(stack, campaignId)).toEqual({
      confirmed_amount: 25_000,
      donation_count: 1,
    });
  });

  it('charges back a dispute opened while the donation is being confirmed', async () => {
    const { id, external: disputeId } = await whileConfirming(
      30_000,
      (payment) => stack.simulator.openDispute(payment).id,
      (donationId, disputeId) =>
        processedEvent(stack, donationId, { kind: 'dispute', status: 'OPEN', disputeId }),
    );
    await waitForStatus(stack, id, 'CHARGED_BACK');
    expect(await ledgerOf(stack, id)).toEqual([
      ledgerEntry('DONATION', '', 30_000),
      ledgerEntry('CHARGEBACK', disputeId, -30_000),
    ]);
    expect(await totalsOf(stack, campaignId)).toEqual({ confirmed_amount: 0, donation_count: 0 });
  });

  it('moves no money for an operator refund the provider denies', async () => {
    const { id, payment } = await credited(30_000, { refundOutcome: 'denied' });
    const response = await fetch(`${stack.apiUrl}/v1/donations/${id}/refunds`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${OPERATOR_SECRET}`,
        'idempotency-key': `denied-${randomUUID()}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ reason: 'donor asked' }),
    });
    expect(response.status).toBe(202);
    const { workflowId } = (await response.json()) as { workflowId: string };
    const request = await closedResult<RefundRequestResult>(stack, workflowId);
    expect(request.status).toBe('FAILED');
    expect(
      await closedResult<ReversalResult>(stack, reversalWorkflowId(id, 'refund', request.refundId)),
    ).toMatchObject({ outcome: 'no-money-moved' });

    expect(stack.simulator.payment(payment)?.refunds).toEqual([
      expect.objectContaining({ id: request.refundId, status: 'failed', amount: 30_000 }),
    ]);
    expect((await rowOf(stack, id)).status).toBe('CONFIRMED');
    expect(await ledgerOf(stack, id)).toEqual([ledgerEntry('DONATION', '', 30_000)]);
    expect(await totalsOf(stack, campaignId)).toEqual({
      confirmed_amount: 30_000,
      donation_count: 1,
    });
  });

  it('moves no money for a refund that stays pending and then fails', async () => {
    const { id, payment } = await credited(20_000, { refundSettleMs: -1 });
    const refund = stack.simulator.refundAtProvider(payment, 20_000);
    const reversal = reversalWorkflowId(id, 'refund', refund.id);
    // Followed while pending, with nothing posted.
    await runningWorkflow(stack, reversal);
    await processedEvent(stack, id, { kind: 'refund', status: 'PENDING', refundId: refund.id });
    expect(await ledgerOf(stack, id)).toEqual([ledgerEntry('DONATION', '', 20_000)]);
    expect((await rowOf(stack, id)).status).toBe('CONFIRMED');

    stack.simulator.settleRefund(refund.id, 'failed');
    expect(await closedResult<ReversalResult>(stack, reversal)).toMatchObject({
      outcome: 'no-money-moved',
    });
    await processedEvent(stack, id, { kind: 'refund', status: 'FAILED', refundId: refund.id });
    expect(await closedResult<ReversalResult>(stack, reversal)).toMatchObject({
      outcome: 'no-money-moved',
    });
    expect(await ledgerOf(stack, id)).toEqual([ledgerEntry('DONATION', '', 20_000)]);
    expect((await rowOf(stack, id)).status).toBe('CONFIRMED');
    expect(await totalsOf(stack, campaignId)).toEqual({
      confirmed_amount: 20_000,
      donation_count: 1,
    });
  });

  it('gives the money back when a refund that succeeded later fails', async () => {
    const { id, payment } = await credited(20_000, { refundSettleMs: -1 });
    const refund = stack.simulator.refundAtProvider(payment, 20_000);
    stack.simulator.settleRefund(refund.id, 'succeeded');
    await waitForStatus(stack, id, 'REFUNDED');
    expect(await totalsOf(stack, campaignId)).toEqual({ confirmed_amount: 0, donation_count: 0 });

    stack.simulator.settleRefund(refund.id, 'failed');
    await waitForStatus(stack, id, 'CONFIRMED');
    expect(await ledgerOf(stack, id)).toEqual([
      ledgerEntry('DONATION', '', 20_000),
      ledgerEntry('REFUND', refund.id, -20_000),
      ledgerEntry('REFUND_REVERSAL', refund.id, 20_000),
    ]);
    expect(await totalsOf(stack, campaignId)).toEqual({
      confirmed_amount: 20_000,
      donation_count: 1,
    });
  });

  it('charges back an opened dispute and credits it again when the dispute is won', async () => {
    const { id, payment } = await credited(30_000);
    const dispute = stack.simulator.openDispute(payment);
    await waitForStatus(stack, id, 'CHARGED_BACK');
    expect(await ledgerOf(stack, id)).toEqual([
      ledgerEntry('DONATION', '', 30_000),
      ledgerEntry('CHARGEBACK', dispute.id, -30_000),
    ]);
    expect(await totalsOf(stack, campaignId)).toEqual({ confirmed_amount: 0, donation_count: 0 });

    stack.simulator.closeDispute(dispute.id, 'won');
    await waitForStatus(stack, id, 'CONFIRMED');
    expect(await ledgerOf(stack, id)).toEqual([
      ledgerEntry('DONATION', '', 30_000),
      ledgerEntry('CHARGEBACK', dispute.id, -30_000),
      ledgerEntry('CHARGEBACK_REVERSAL', dispute.id, 30_000),
    ]);
    expect(await totalsOf(stack, campaignId)).toEqual({
      confirmed_amount: 30_000,
      donation_count: 1,
    });
  });

  it('keeps a lost dispute charged back with one chargeback entry', async () => {
    const { id, payment } = await credited(30_000);
    const dispute = stack.simulator.openDispute(payment);
    await waitForStatus(stack, id, 'CHARGED_BACK');
    stack.simulator.closeDispute(dispute.id, 'lost');
    await processedEvent(stack, id, { kind: 'dispute', status: 'LOST', disputeId: dispute.id });
    expect(
      await closedResult<ReversalResult>(stack, reversalWorkflowId(id, 'dispute', dispute.id)),
    ).toMatchObject({ outcome: 'posted', donationStatus: 'CHARGED_BACK' });
    expect(await ledgerOf(stack, id)).toEqual([
      ledgerEntry('DONATION', '', 30_000),
      ledgerEntry('CHARGEBACK', dispute.id, -30_000),
    ]);
    expect((await rowOf(stack, id)).status).toBe('CHARGED_BACK');
    expect(await totalsOf(stack, campaignId)).toEqual({ confirmed_amount: 0, donation_count: 0 });
  });

  it('posts a dispute won while its opening is being posted', async () => {
    const { id, payment } = await credited(25_000);
    const dispute = await holdingRow(stack, id, async (blocked) => {
      const opened = stack.simulator.openDispute(payment, 10_000);
      // The dispute's reversal is posting the chargeback when the provider says it was won.
      await blocked();
      stack.simulator.closeDispute(opened.id, 'won');
      await processedEvent(stack, id, { kind: 'dispute', status: 'WON', disputeId: opened.id });
      return opened;
    });
    expect(await ledgerWith(stack, id, 3)).toEqual([
      ledgerEntry('DONATION', '', 25_000),
      ledgerEntry('CHARGEBACK', dispute.id, -10_000),
      ledgerEntry('CHARGEBACK_REVERSAL', dispute.id, 10_000),
    ]);
    expect((await rowOf(stack, id)).status).toBe('CONFIRMED');
    expect(await totalsOf(stack, campaignId)).toEqual({
      confirmed_amount: 25_000,
      donation_count: 1,
    });
  });

  it('posts a dispute of the whole charge after a partial refund, below zero, for review', async () => {
    const { id, payment } = await credited(40_000);
    const refund = stack.simulator.refundAtProvider(payment, 15_000);
    await waitForStatus(stack, id, 'PARTIALLY_REFUNDED');
    // The cardholder disputes the charge: all 40 000, though only 25 000 are left after the refund.
    const dispute = stack.simulator.openDispute(payment, 40_000);
    await waitForStatus(stack, id, 'NEEDS_REVIEW');
    expect(await ledgerOf(stack, id)).toEqual([
      ledgerEntry('DONATION', '', 40_000),
      ledgerEntry('REFUND', refund.id, -15_000),
      ledgerEntry('CHARGEBACK', dispute.id, -40_000),
    ]);
    expect(await totalsOf(stack, campaignId)).toEqual({
      confirmed_amount: -15_000,
      donation_count: 0,
    });

    // Won: the bank gives the 40 000 back and the donation's money follows.
    stack.simulator.closeDispute(dispute.id, 'won');
    await waitForStatus(stack, id, 'PARTIALLY_REFUNDED');
    expect(await totalsOf(stack, campaignId)).toEqual({
      confirmed_amount: 25_000,
      donation_count: 1,
    });
  });
});
