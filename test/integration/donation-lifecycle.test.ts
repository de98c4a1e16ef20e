import { deriveUuid } from '../../src/idempotency/idempotency-key';
import { donationWorkflowId } from '../../workflows/contracts';
import { getStateQuery, paymentEventSignal } from '../../workflows/contracts';
import type { PaymentEvent, PaymentStatus } from '../../workflows/contracts';
import {
  clientAScope,
  effectsOf,
  postDonation,
  totalsOf,
  waitForStatus,
  workflowResult,
} from '../support/donations';
import {
  OPERATOR_SECRET,
  createCampaign,
  donationBody,
  eventually,
  startStack,
} from '../support/stack';
import type { Stack } from '../support/stack';

/**
 * The donation workflow's paths on the real stack. Payments time out after 3 s here (config),
 * so deadline cases run in seconds rather than the production 15 minutes.
 */
describe('donation lifecycle', () => {
  let stack: Stack;
  let campaignId: string;

  beforeAll(async () => {
    stack = await startStack({ autoPayMs: 150, paymentTimeoutSeconds: 3 });
  });
  beforeEach(async () => {
    campaignId = await createCampaign(stack.db);
  });
  afterAll(async () => {
    await stack.stop();
  });

  /** Plans the simulator's behaviour for the donation this key will create. */
  const planned = (key: string, plan: Parameters<Stack['simulator']['plan']>[1]) => {
    const donationId = deriveUuid(clientAScope(key));
    stack.simulator.plan(donationId, plan);
    return donationId;
  };

  it('confirms a paid donation once and credits the campaign', async () => {
    const key = `happy-${Date.now()}`;
    const response = await postDonation(stack.apiUrl, key, donationBody(campaignId, 70_000));
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    expect(await workflowResult(stack, id)).toEqual({
      donationId: id,
      status: 'CONFIRMED',
      credited: true,
    });
    const effects = await effectsOf(stack, id);
    expect(effects).toMatchObject({ donations: 1, workflows: 1, charges: 1 });
    expect(effects.ledger).toEqual([{ entry_type: 'DONATION', amount: 70_000 }]);
    expect(await totalsOf(stack, campaignId)).toEqual({
      confirmed_amount: 70_000,
      donation_count: 1,
    });
  });

  it('answers a declined payment with a cached 402 and records a failed donation', async () => {
    const key = `decline-${Date.now()}`;
    const id = planned(key, { decline: true });
    const response = await postDonation(stack.apiUrl, key, donationBody(campaignId));
    expect(response.status).toBe(402);
    expect(await response.json()).toMatchObject({ code: 'payment-declined' });
    const again = await postDonation(stack.apiUrl, key, donationBody(campaignId));
    expect(again.status).toBe(402);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    await waitForStatus(stack, id, 'FAILED');
    expect((await effectsOf(stack, id)).ledger).toEqual([]);
  });

  it('expires an unpaid donation at the deadline and cancels it at the provider', async () => {
    const key = `expire-${Date.now()}`;
    const id = planned(key, { autoPayMs: -1 });
    expect((await postDonation(stack.apiUrl, key, donationBody(campaignId))).status).toBe(202);
    expect(await workflowResult(stack, id)).toMatchObject({ status: 'EXPIRED', credited: false });
    expect(stack.simulator.paymentByReference(id)?.status).toBe('canceled');
    expect((await effectsOf(stack, id)).ledger).toEqual([]);
    expect(await totalsOf(stack, campaignId)).toEqual({ confirmed_amount: 0, donation_count: 0 });
  });

  it('credits once when the webhook is lost but the provider says paid at the deadline', async () => {
    const key = `lost-webhook-${Date.now()}`;
    const id = planned(key, { dropWebhooks: true, autoPayMs: 100 });
    expect((await postDonation(stack.apiUrl, key, donationBody(campaignId))).status).toBe(202);
    expect(await workflowResult(stack, id)).toMatchObject({ status: 'CONFIRMED', credited: true });
    const state = await stack.db
      .selectFrom('webhook_inbox')
      .selectAll()
      .where('donation_id', '=', id)
      .execute();
    expect(state).toEqual([]);
    expect((await effectsOf(stack, id)).ledger).toHaveLength(1);
  });

  it('takes a webhook that arrives before the workflow waits for it', async () => {
    const key = `early-webhook-${Date.now()}`;
    const id = planned(key, { autoPayMs: 0 });
    expect((await postDonation(stack.apiUrl, key, donationBody(campaignId))).status).toBe(202);
    expect(await workflowResult(stack, id)).toMatchObject({ status: 'CONFIRMED', credited: true });
  });

  it('ignores duplicate and reordered payment events', async () => {
    const key = `reorder-${Date.now()}`;
    const id = planned(key, { autoPayMs: -1 });
    expect((await postDonation(stack.apiUrl, key, donationBody(campaignId))).status).toBe(202);
    const handle = stack.temporal.workflow.getHandle(donationWorkflowId(id));
    const reference = await paymentOf(stack, id);
    await handle.signal(paymentEventSignal, paymentEvent(reference, 'PAID', 'settlement-1'));
    await handle.signal(paymentEventSignal, paymentEvent(reference, 'PAID', 'settlement-1'));
    await handle.signal(paymentEventSignal, paymentEvent(reference, 'PENDING', 'pending-late'));
    expect(await handle.result()).toMatchObject({ status: 'CONFIRMED', credited: true });
    expect((await effectsOf(stack, id)).ledger).toHaveLength(1);
  });

  it('shows its live state through the getState query while it waits', async () => {
    const key = `reorder-query-${Date.now()}`;
    const id = planned(key, { autoPayMs: -1 });
    expect((await postDonation(stack.apiUrl, key, donationBody(campaignId))).status).toBe(202);
    const handle = stack.temporal.workflow.getHandle(donationWorkflowId(id));
    const reference = await paymentOf(stack, id);
    await handle.signal(paymentEventSignal, paymentEvent(reference, 'PENDING', 'pending-1'));
    const state = await eventually(async () => {
      const s = await handle.query(getStateQuery);
      return s.timeline.some((t) => t.event === 'payment-event') ? s : undefined;
    });
    expect(state.payment?.status).toBe('PENDING');
    expect(state.status).toBe('AWAITING_PAYMENT');
    await handle.terminate('test done');
  });

  it('sends a payment of the wrong amount to review and credits nothing', async () => {
    const key = `mismatch-${Date.now()}`;
    const id = planned(key, { payAmount: 5_000 });
    expect((await postDonation(stack.apiUrl, key, donationBody(campaignId))).status).toBe(202);
    expect(await workflowResult(stack, id)).toMatchObject({
      status: 'NEEDS_REVIEW',
      credited: false,
    });
    expect((await effectsOf(stack, id)).ledger).toEqual([]);
    expect(await totalsOf(stack, campaignId)).toEqual({ confirmed_amount: 0, donation_count: 0 });
  });

  it('refunds through the operator endpoint once: reversing entry, lower total', async () => {
    const key = `refund-${Date.now()}`;
    const response = await postDonation(stack.apiUrl, key, donationBody(campaignId, 40_000));
    const { id } = (await response.json()) as { id: string };
    await workflowResult(stack, id);

    const refund = () =>
      fetch(`${stack.apiUrl}/v1/donations/${id}/refunds`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${OPERATOR_SECRET}`,
          'idempotency-key': `refund-of-${id}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ reason: 'donor asked' }),
      });
    const first = await refund();
    expect(first.status).toBe(202);
    expect(await first.json()).toMatchObject({
      kind: 'REFUND',
      amount: 40_000,
      status: 'REQUESTED',
    });
    expect((await refund()).headers.get('idempotent-replayed')).toBe('true');

    await waitForStatus(stack, id, 'REFUNDED');
    expect(stack.simulator.paymentByReference(id)?.refunds).toHaveLength(1);
    expect((await effectsOf(stack, id)).ledger).toEqual([
      { entry_type: 'DONATION', amount: 40_000 },
      { entry_type: 'REFUND', amount: -40_000 },
    ]);
    expect(await totalsOf(stack, campaignId)).toEqual({ confirmed_amount: 0, donation_count: 0 });

    const client = await fetch(`${stack.apiUrl}/v1/donations/${id}/refunds`, {
      method: 'POST',
      headers: {
        authorization: 'Bearer secret-a-123',
        'idempotency-key': 'x',
        'content-type': 'application/json',
      },
      body: JSON.stringify({ reason: 'not mine to refund' }),
    });
    expect(client.status).toBe(403);
  });

  it('records a chargeback the provider reports after the workflow closed', async () => {
    const key = `chargeback-${Date.now()}`;
    const response = await postDonation(stack.apiUrl, key, donationBody(campaignId, 30_000));
    const { id } = (await response.json()) as { id: string };
    await workflowResult(stack, id);
    stack.simulator.openDispute(await paymentOf(stack, id));

    await waitForStatus(stack, id, 'CHARGED_BACK');
    expect((await effectsOf(stack, id)).ledger).toEqual([
      { entry_type: 'DONATION', amount: 30_000 },
      { entry_type: 'CHARGEBACK', amount: -30_000 },
    ]);
    expect(await totalsOf(stack, campaignId)).toEqual({ confirmed_amount: 0, donation_count: 0 });
  });

  it('refuses donations to a closed campaign with 422 campaign-closed', async () => {
    await stack.db
      .updateTable('campaigns')
      .set({ status: 'CLOSED' })
      .where('id', '=', campaignId)
      .execute();
    const response = await postDonation(
      stack.apiUrl,
      `closed-${Date.now()}`,
      donationBody(campaignId),
    );
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({ code: 'campaign-closed' });
  });
});

describe('providers whose notifications cannot prove themselves', () => {
  it('credits a paid notification only once the status API confirms it', async () => {
    const stack = await startStack({ autoPayMs: -1, verifyWithProvider: true });
    try {
      const campaignId = await createCampaign(stack.db);
      const response = await postDonation(
        stack.apiUrl,
        `verify-${Date.now()}`,
        donationBody(campaignId),
      );
      const { id } = (await response.json()) as { id: string };
      const handle = stack.temporal.workflow.getHandle(donationWorkflowId(id));
      // A notification that says "paid" while the provider says "pending" (forged or early).
      const reference = await paymentOf(stack, id);
      await handle.signal(paymentEventSignal, paymentEvent(reference, 'PAID', 'forged'));
      const doubted = await eventually(async () => {
        const state = await handle.query(getStateQuery);
        return state.timeline.some((t) => t.event === 'provider-status') ? state : undefined;
      });
      expect(doubted.status).toBe('AWAITING_PAYMENT');
      expect((await effectsOf(stack, id)).ledger).toEqual([]);

      stack.simulator.transition(stack.simulator.paymentByReference(id)?.id ?? '', 'settled');
      expect(await handle.result()).toMatchObject({ status: 'CONFIRMED', credited: true });
      expect((await effectsOf(stack, id)).ledger).toHaveLength(1);
    } finally {
      await stack.stop();
    }
  });
});

/** The provider's id of the donation's payment, once the workflow has created it. */
async function paymentOf(stack: Stack, donationId: string): Promise<string> {
  return eventually(async () => stack.simulator.paymentByReference(donationId)?.id);
}

/** A normalized payment event for a 50 000 IDR donation, as the webhook intake would signal it. */
function paymentEvent(
  providerReference: string,
  status: PaymentStatus,
  eventKey: string,
): PaymentEvent {
  return {
    kind: 'payment',
    providerReference,
    eventKey,
    status,
    amount: 50_000,
    currency: 'IDR',
    occurredAt: new Date().toISOString(),
  };
}
