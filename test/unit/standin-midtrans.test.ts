import { ProviderUnavailable } from '../../src/providers/payment-provider';
import { createMidtransProvider } from '../../src/providers/midtrans/midtrans-provider';
import {
  midtransRetries,
  midtransStandinSignature,
  startMidtransStandin,
} from '../support/standins/midtrans';
import type { MidtransStandin } from '../support/standins/midtrans';
import { startSink } from '../support/standins/sink';

const serverKey = 'SB-Mid-server-standin';
let sink: Awaited<ReturnType<typeof startSink>>;
let midtrans: MidtransStandin;
let adapter: ReturnType<typeof createMidtransProvider>;
let order = 0;

beforeEach(async () => {
  sink = await startSink();
  midtrans = await startMidtransStandin({ serverKey, notificationUrl: sink.url, timeScale: 0 });
  adapter = createMidtransProvider({ baseUrl: midtrans.url, serverKeys: [serverKey] });
});
afterEach(async () => {
  await midtrans.close();
  await sink.close();
});

const charge = (method: string, amount = 26_000) =>
  adapter.createPayment({
    idempotencyKey: `k-${++order}`,
    donationId: `don-${order}-${Date.now()}`,
    amount,
    currency: 'IDR',
    method,
    description: 'Donation',
  });
const orderOf = () => `don-${order}-`;

describe('Midtrans stand-in against the documented contract', () => {
  test("signs with SHA512(order_id + status_code + gross_amount + ServerKey): Midtrans' example", () => {
    // The example Midtrans' API reference gave for "Verifying Notification Authenticity".
    expect(
      midtransStandinSignature(
        'Postman-1578568851',
        '200',
        '10000.00',
        'VT-server-HJMpl9HLr_ntOKt5mRONdmKj',
      ),
    ).toBe(
      'e78e2223638cb60dbdbc88d23deb9b927ac41be7263ab38758605bac834dc25425705543707504bfef0802914cfa3f5f538fa308d1f9086211c420e7892ba2ba',
    );
  });

  test('retries as documented: 500 once, 503 four times, 400/404 twice, 301 never, others five', () => {
    expect([200, 500, 503, 400, 404, 301, 302, 303, 502, undefined].map(midtransRetries)).toEqual([
      0, 1, 4, 2, 2, 0, 0, 0, 5, 5,
    ]);
  });

  test('every per-transaction path takes the order id or the transaction id', async () => {
    const created = await charge('qris');
    const byTransaction = await adapter.fetchPayment(created.providerReference);
    const orderId = midtrans.transaction(created.providerReference)?.order_id ?? '';
    expect(orderId.startsWith(orderOf())).toBe(true);
    const byOrder = await adapter.fetchPayment(orderId);
    expect(byOrder).toEqual(byTransaction);
    expect(byOrder.status).toBe('PENDING');
  });

  test('a settlement is notified, signed by the stand-in, and retried after a 503', async () => {
    const created = await charge('qris');
    const orderId = midtrans.transaction(created.providerReference)?.order_id ?? '';
    sink.answer(503, 503);
    midtrans.pay(orderId);
    await midtrans.notifier.settled();
    expect(midtrans.notifier.deliveries.at(-1)?.attempts).toEqual([503, 503, 200]);
    const raw = sink.received.at(-1);
    expect(raw?.headers['user-agent']).toBe('Veritrans');
    const event = adapter.parseWebhook(Buffer.from(raw?.body ?? ''), raw?.headers ?? {});
    expect(event).toMatchObject({
      kind: 'payment',
      status: 'PAID',
      amount: 26_000,
      donationRef: orderId,
    });
    expect((await adapter.fetchPayment(orderId)).status).toBe('PAID');
  });

  test('an expired transaction reads with status_code 407 and the adapter reports EXPIRED', async () => {
    const created = await charge('bank_transfer');
    midtrans.expire(created.providerReference);
    expect(midtrans.transaction(created.providerReference)?.status_code).toBe('407');
    expect((await adapter.fetchPayment(created.providerReference)).status).toBe('EXPIRED');
  });

  test('a Mandiri Bill payment can turn from settlement to deny (the reversal case)', async () => {
    const created = await charge('echannel');
    midtrans.pay(created.providerReference);
    midtrans.reverse(created.providerReference);
    await midtrans.notifier.settled();
    const bodies = sink.bodies<{ transaction_status: string; status_code: string }>();
    expect(bodies.map((b) => b.transaction_status)).toEqual(['settlement', 'deny']);
    expect(bodies[1]?.status_code).toBe('202');
    expect((await adapter.fetchPayment(created.providerReference)).status).toBe('DECLINED');
  });

  test('refund: pending until the bank confirms, two notifications, the second with bank_confirmed_at', async () => {
    const created = await charge('qris');
    midtrans.pay(created.providerReference);
    const refund = await adapter.refund({
      idempotencyKey: 'don-r1',
      providerReference: created.providerReference,
      amount: 10_000,
      currency: 'IDR',
      reason: 'requested',
    });
    expect(refund).toMatchObject({ status: 'PENDING', amount: 10_000 });
    midtrans.confirmRefund(created.providerReference, 'don-r1');
    await midtrans.notifier.settled();
    const last = sink
      .bodies<{ transaction_status: string; refunds?: { bank_confirmed_at?: string }[] }>()
      .at(-1);
    expect(last?.transaction_status).toBe('partial_refund');
    expect(last?.refunds?.[0]?.bank_confirmed_at).toEqual(expect.any(String));
    const read = await adapter.fetchPayment(created.providerReference);
    expect(read.refunds).toEqual([
      { refundId: refund.refundId, status: 'SUCCEEDED', amount: 10_000 },
    ]);
  });

  test('refund_key: a booked key answers 406; a key denied by the bank may be reattempted', async () => {
    const created = await charge('qris');
    midtrans.pay(created.providerReference);
    midtrans.denyNextRefund(created.providerReference);
    const request = {
      providerReference: created.providerReference,
      amount: 5_000,
      currency: 'IDR',
      reason: 'x',
    };
    const denied = await adapter.refund({ ...request, idempotencyKey: 'don-r2' });
    expect(denied.status).toBe('FAILED');
    expect(midtrans.transaction(created.providerReference)?.transaction_status).toBe('settlement');
    const retried = await adapter.refund({ ...request, idempotencyKey: 'don-r2' });
    // The reattempt with the same key is the same refund process: the same id, now booked.
    expect(retried).toEqual({ refundId: denied.refundId, status: 'PENDING', amount: 5_000 });
    const again = await adapter.refund({ ...request, idempotencyKey: 'don-r2' });
    expect(again.refundId).toBe(denied.refundId);
    expect(midtrans.calls.filter((c) => c.path.endsWith('/refund')).length).toBe(3);
  });

  test('refund_key takes letters, digits, - and _ of any length the docs allow', async () => {
    const created = await charge('qris');
    midtrans.pay(created.providerReference);
    const key = `${'d'.repeat(36)}-refund-${'u'.repeat(36)}`; // 80 characters, like galang's.
    const answer = await fetch(`${midtrans.url}/v2/${created.providerReference}/refund`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${serverKey}:`).toString('base64')}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ refund_key: key, amount: 1_000 }),
    });
    expect(await answer.json()).toMatchObject({ status_code: '200', refund_key: key });
  });

  test('virtual-account payments cannot be refunded through the API (412)', async () => {
    const created = await charge('bank_transfer');
    midtrans.pay(created.providerReference);
    const body = await (
      await fetch(`${midtrans.url}/v2/${created.providerReference}/refund`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${serverKey}:`).toString('base64')}` },
        body: JSON.stringify({ refund_key: 'va-1', amount: 1_000 }),
      })
    ).json();
    expect(body).toEqual({
      status_code: '412',
      status_message: 'Merchant cannot modify the status of the transaction',
    });
  });

  test('fault knobs: a 503 is transient for the adapter; the next call goes through', async () => {
    const created = await charge('qris');
    midtrans.faults.add('GET /v2/', { kind: 'status', status: 503 });
    await expect(adapter.fetchPayment(created.providerReference)).rejects.toBeInstanceOf(
      ProviderUnavailable,
    );
    expect((await adapter.fetchPayment(created.providerReference)).status).toBe('PENDING');
  });
});
