import { ProviderRejected } from '../../src/providers/http-json';
import type { PaymentProvider, WebhookEvent } from '../../src/providers/payment-provider';
import { createSimulatorProvider } from '../../src/providers/simulator/simulator-provider';
import { PaymentSimulator } from '../../src/providers/simulator/simulator-server';
import type { SimulatorPayment } from '../../src/providers/simulator/simulator-protocol';
import { signStandardWebhook } from '../../src/providers/standard-webhooks';
import type { DisputeEvent, RefundEvent } from '../../workflows/contracts';
import { webhookSink } from '../support/webhook-sink';

const SECRET = 'whsec_c2ltdWxhdG9yLWxpZmVjeWNsZS10ZXN0';

/**
 * The simulator and galang's client for it, with no pipeline: every lifecycle path the money
 * model needs (processing, partial refunds, denied and failed refunds, disputes) reachable
 * through the API, the in-process controls and the `/test/…` endpoints, and every change
 * notified as a signed event the client normalizes.
 */
describe('payment simulator lifecycles', () => {
  let simulator: PaymentSimulator;
  let sink: Awaited<ReturnType<typeof webhookSink>>;
  let provider: PaymentProvider;
  let url: string;
  let n = 0;

  beforeAll(async () => {
    sink = await webhookSink();
    simulator = new PaymentSimulator({
      webhookUrl: sink.url,
      webhookSecret: SECRET,
      autoPayMs: -1,
    });
    url = await simulator.listen(0);
    provider = createSimulatorProvider({ baseUrl: url, webhookSecrets: [SECRET] });
  });
  afterAll(async () => {
    await simulator.close();
    await sink.close();
  });

  const create = async (
    plan: Parameters<PaymentSimulator['plan']>[1] = {},
    amount = 40_000,
    method = 'qris',
  ) => {
    const reference = `don-${++n}-${Date.now()}`;
    simulator.plan(reference, plan);
    const created = await provider.createPayment({
      idempotencyKey: `${reference}-create`,
      donationId: reference,
      amount,
      currency: 'IDR',
      method,
      description: 'test',
    });
    return { reference, id: created.providerReference, created };
  };
  const refund = (id: string, key: string, amount: number) =>
    provider.refund({
      idempotencyKey: key,
      providerReference: id,
      amount,
      currency: 'IDR',
      reason: 'r',
    });
  /** Every event delivered so far about one payment, normalized by the client. */
  const events = (paymentId: string): WebhookEvent[] =>
    sink.received
      .map((w) => provider.parseWebhook(w.body, w.headers))
      .filter((e) => e.kind !== 'ignored' && e.providerReference === paymentId);
  const until = async <T>(check: () => T | undefined | false): Promise<T> => {
    for (let i = 0; i < 100; i++) {
      const value = check();
      if (value) return value;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error('condition not met');
  };
  const control = async (path: string, body?: object) => {
    const response = await fetch(`${url}/test/${path}`, {
      method: 'POST',
      ...(body && { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it('charges once per idempotency key and answers the same payment again', async () => {
    const { reference, id, created } = await create();
    expect(created).toMatchObject({ status: 'PENDING', action: { type: 'qr' } });
    const again = await provider.createPayment({
      idempotencyKey: `${reference}-create`,
      donationId: reference,
      amount: 40_000,
      currency: 'IDR',
      method: 'qris',
      description: 'test',
    });
    expect(again.providerReference).toBe(id);
    expect(simulator.chargeCount(`${reference}-create`)).toBe(1);
  });

  it('lists every payment it made, with refunds, at GET /test/payments', async () => {
    const { reference, id } = await create();
    simulator.transition(id, 'settled');
    await refund(id, `${reference}-refund`, 15_000);
    const response = await fetch(`${url}/test/payments`);
    const { payments } = (await response.json()) as { payments: SimulatorPayment[] };
    const listed = payments.filter((payment) => payment.reference === reference);
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ id, status: 'settled', refunds: [{ amount: 15_000 }] });
  });

  it('cancels a pending payment, accepts closing it again, and notifies CANCELED', async () => {
    const { id } = await create();
    expect(await provider.cancel(id)).toMatchObject({
      accepted: true,
      payment: { status: 'CANCELED' },
    });
    expect((await provider.cancel(id)).accepted).toBe(true);
    const seen = await until(() => events(id).find((e) => e.kind === 'payment'));
    expect(seen).toMatchObject({ kind: 'payment', status: 'CANCELED', amount: 40_000 });
  });

  it('refuses to cancel while processing (409 → accepted:false), then settles late', async () => {
    const { id } = await create({ autoPayMs: 0, processingMs: -1 });
    await until(() => simulator.payment(id)?.status === 'processing');
    expect(await provider.cancel(id)).toEqual({
      accepted: false,
      payment: expect.objectContaining({ status: 'PENDING' }) as unknown,
    });
    expect((await control(`payments/${id}/settle`)).status).toBe(200);
    expect((await provider.fetchPayment(id)).status).toBe('PAID');
    expect(await provider.cancel(id)).toMatchObject({
      accepted: false,
      payment: { status: 'PAID' },
    });
    // A settled payment never goes back.
    expect((await control(`payments/${id}/expire`)).status).toBe(409);
  });

  it('accepts a late success after expiry (the bank says so)', async () => {
    const { id } = await create();
    simulator.transition(id, 'expired');
    expect((await provider.fetchPayment(id)).status).toBe('EXPIRED');
    simulator.transition(id, 'settled');
    expect((await provider.fetchPayment(id)).status).toBe('PAID');
  });

  it('refunds in parts, each with an id, settling pending → succeeded, and a repeat answers the same refund', async () => {
    const { id, reference } = await create({ refundSettleMs: -1 });
    simulator.transition(id, 'settled');
    const first = await refund(id, `${reference}-refund-a`, 15_000);
    expect(first).toMatchObject({ status: 'PENDING', amount: 15_000 });
    expect(await refund(id, `${reference}-refund-a`, 15_000)).toEqual(first);
    expect(simulator.refundCount(`${reference}-refund-a`)).toBe(1);
    await expect(refund(id, `${reference}-refund-a`, 10_000)).rejects.toBeInstanceOf(
      ProviderRejected,
    );
    const second = await refund(id, `${reference}-refund-b`, 25_000);
    expect(second.refundId).not.toBe(first.refundId);
    // Nothing is left to refund while both are pending.
    await expect(refund(id, `${reference}-refund-c`, 1)).rejects.toMatchObject({ status: 422 });
    simulator.settleRefund(first.refundId, 'succeeded');
    expect((await control(`refunds/${second.refundId}/fail`)).status).toBe(200);
    const payment = await provider.fetchPayment(id);
    expect(payment.status).toBe('PAID');
    expect(payment.refunds).toEqual([
      { refundId: first.refundId, status: 'SUCCEEDED', amount: 15_000 },
      { refundId: second.refundId, status: 'FAILED', amount: 25_000 },
    ]);
    expect(simulator.payment(id)?.refunded_amount).toBe(15_000);
    const refundEvents = await until(() => {
      const seen = events(id).filter((e): e is RefundEvent & WebhookEvent => e.kind === 'refund');
      return seen.length >= 4 && seen;
    });
    expect(refundEvents.map((e) => `${e.refundId}:${e.status}`)).toEqual(
      expect.arrayContaining([
        `${first.refundId}:PENDING`,
        `${first.refundId}:SUCCEEDED`,
        `${second.refundId}:FAILED`,
      ]),
    );
    // The payment's own notification carries the refunded amount.
    await until(() =>
      sink.received.some((w) => {
        const body = JSON.parse(w.body.toString()) as {
          type: string;
          data: { id: string; refunded_amount?: number };
        };
        return (
          body.type === 'payment.updated' &&
          body.data.id === id &&
          body.data.refunded_amount === 15_000
        );
      }),
    );
  });

  it('answers a refund the bank denies as a failed refund, and one that succeeds then fails', async () => {
    const denied = await create({ refundOutcome: 'denied' });
    simulator.transition(denied.id, 'settled');
    expect(await refund(denied.id, `${denied.reference}-r`, 40_000)).toMatchObject({
      status: 'FAILED',
    });

    const bounced = await create({ refundSettleMs: 0 });
    simulator.transition(bounced.id, 'settled');
    const r = await refund(bounced.id, `${bounced.reference}-r`, 40_000);
    await until(() => simulator.payment(bounced.id)?.refunds[0]?.status === 'succeeded');
    expect(simulator.payment(bounced.id)?.refunded_amount).toBe(40_000);
    simulator.settleRefund(r.refundId, 'failed');
    expect(simulator.payment(bounced.id)?.refunded_amount).toBe(0);
    expect((await provider.fetchPayment(bounced.id)).refunds[0]?.status).toBe('FAILED');
  });

  it('takes a bank transfer (a virtual account) but refunds it neither by API nor by control', async () => {
    expect(provider.refundable('bank_transfer')).toBe(false);
    expect(provider.refundable('qris')).toBe(true);
    const { id, reference } = await create({}, 40_000, 'bank_transfer');
    simulator.transition(id, 'settled');
    await expect(refund(id, `${reference}-r`, 40_000)).rejects.toMatchObject({ status: 409 });
    expect(await control(`payments/${id}/refunds`, { amount: 1_000 })).toMatchObject({
      status: 409,
      body: { code: 'payment_not_refundable' },
    });
    expect((await provider.fetchPayment(id)).refunds).toEqual([]);
  });

  it('refunds at the provider through the control endpoint, settling by the plan', async () => {
    const { id } = await create({ refundOutcome: 'failed', refundSettleMs: 0 });
    simulator.transition(id, 'settled');
    const made = await control(`payments/${id}/refunds`, { amount: 10_000 });
    expect(made).toMatchObject({ status: 201, body: { status: 'pending', amount: 10_000 } });
    await until(() => simulator.payment(id)?.refunds[0]?.status === 'failed');
    expect((await control(`payments/${id}/refunds`)).body).toMatchObject({ amount: 40_000 });
  });

  it('opens disputes that are won or lost, in the status read and as events', async () => {
    const { id } = await create();
    expect((await control(`payments/${id}/disputes`)).status).toBe(409);
    simulator.transition(id, 'settled');
    const opened = await control(`payments/${id}/disputes`, {});
    expect(opened.body).toMatchObject({ status: 'open', amount: 40_000 });
    const disputeId = String(opened.body.id);
    await expect(refund(id, `${id}-during-dispute`, 1)).rejects.toMatchObject({ status: 409 });
    expect((await control(`disputes/${disputeId}/lose`)).status).toBe(200);
    expect((await control(`disputes/${disputeId}/win`)).status).toBe(409);
    expect((await provider.fetchPayment(id)).disputes).toEqual([
      { disputeId, status: 'LOST', amount: 40_000 },
    ]);
    const seen = await until(() => {
      const list = events(id).filter((e): e is DisputeEvent & WebhookEvent => e.kind === 'dispute');
      return list.length >= 2 && list;
    });
    expect(seen.map((e) => e.status).sort()).toEqual(['LOST', 'OPEN']);

    const won = await create();
    simulator.transition(won.id, 'settled');
    const dispute = simulator.openDispute(won.id, 5_000);
    simulator.closeDispute(dispute.id, 'won');
    expect((await provider.fetchPayment(won.id)).disputes[0]).toMatchObject({
      status: 'WON',
      amount: 5_000,
    });
  });

  it('moves payments through every control endpoint and refuses forbidden moves', async () => {
    for (const [action, status] of [
      ['decline', 'DECLINED'],
      ['expire', 'EXPIRED'],
      ['process', 'PENDING'],
      ['settle', 'PAID'],
    ] as const) {
      const { id } = await create();
      expect((await control(`payments/${id}/${action}`)).status).toBe(200);
      expect((await provider.fetchPayment(id)).status).toBe(status);
    }
    expect((await control('payments/nope/settle')).status).toBe(404);
    expect((await control('payments/x/fly')).status).toBe(400);
  });

  it('ignores a signed notification of a type galang has no use for, refuses a forged one', async () => {
    const body = Buffer.from(JSON.stringify({ type: 'payout.paid', data: {} }));
    const ts = Math.floor(Date.now() / 1000);
    const headers = (secret: string) => ({
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(ts),
      'webhook-signature': signStandardWebhook(secret, 'msg_1', ts, body),
    });
    expect(provider.parseWebhook(body, headers(SECRET))).toMatchObject({ kind: 'ignored' });
    expect(() => provider.parseWebhook(body, headers('whsec_b3RoZXI='))).toThrow('no signature');
  });
});
