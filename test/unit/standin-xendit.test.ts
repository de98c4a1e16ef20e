import { ProviderUnavailable } from '../../src/providers/payment-provider';
import {
  XENDIT_STANDIN_TOKEN as callbackToken,
  startXenditWithAdapter,
  xenditAuth as auth,
} from '../support/standins/xendit-with-adapter';

let stand: Awaited<ReturnType<typeof startXenditWithAdapter>>;
let n = 0;

beforeEach(async () => {
  stand = await startXenditWithAdapter();
});
afterEach(async () => {
  await stand.close();
});
const create = (reference: string, currency = 'IDR', amount = 50_000) =>
  stand.adapter.createPayment({
    idempotencyKey: `${reference}-create`,
    donationId: reference,
    amount,
    currency,
    method: 'card',
    description: 'Donation',
  });

describe('Xendit stand-in against xendit-node and the documented contract', () => {
  test('amounts travel in major units: USD 12.34 is 12.34, IDR 50 000 is 50000', async () => {
    const usd = await create(`don-${++n}`, 'USD', 1_234);
    const idr = await create(`don-${++n}`);
    const read = async (id: string) =>
      (await (await fetch(`${stand.xendit.url}/v2/invoices/${id}`, { headers: auth })).json()) as {
        amount: number;
      };
    expect((await read(usd.providerReference)).amount).toBe(12.34);
    expect((await read(idr.providerReference)).amount).toBe(50_000);
    expect((await stand.adapter.fetchPayment(usd.providerReference)).amount).toBe(1_234);
  });

  test('listing invoices by external_id answers an array; creation has no idempotency', async () => {
    const reference = `don-${++n}`;
    const body = JSON.stringify({ external_id: reference, amount: 10_000, currency: 'IDR' });
    const post = () =>
      fetch(`${stand.xendit.url}/v2/invoices`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body,
      });
    await Promise.all([post(), post()]);
    const listed = (await (
      await fetch(`${stand.xendit.url}/v2/invoices?external_id=${reference}`, { headers: auth })
    ).json()) as unknown[];
    expect(Array.isArray(listed)).toBe(true);
    expect(listed).toHaveLength(2);
  });

  test('expire! answers the invoice expired; xendit-node paths and its 404 code', async () => {
    const reference = `don-${++n}`;
    // xendit-node's createInvoice posts to `/v2/invoices/`, with the slash.
    const made = (await (
      await fetch(`${stand.xendit.url}/v2/invoices/`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ external_id: reference, amount: 10_000, currency: 'IDR' }),
      })
    ).json()) as { id: string };
    const expire = (id: string) =>
      fetch(`${stand.xendit.url}/invoices/${id}/expire!`, { method: 'POST', headers: auth });
    const expired = await expire(made.id);
    expect(expired.status).toBe(200);
    expect(await expired.json()).toMatchObject({ id: made.id, status: 'EXPIRED' });
    const unknown = await expire('5f4708b7bd394b0400b96276');
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error_code: 'INVOICE_NOT_FOUND_ERROR' });
  });

  test('callbacks carry the static x-callback-token (no signature) and are retried', async () => {
    const created = await create(`don-${++n}`);
    stand.invoices.answer(500);
    stand.xendit.pay(created.providerReference, 'CREDIT_CARD');
    await stand.xendit.invoiceNotifier.settled();
    expect(stand.xendit.invoiceNotifier.deliveries[0]?.attempts).toEqual([500, 200]);
    const raw = stand.invoices.received.at(-1);
    expect(raw?.headers['x-callback-token']).toBe(callbackToken);
    expect(Object.keys(raw?.headers ?? {}).some((h) => h.includes('signature'))).toBe(false);
    const event = stand.adapter.parseWebhook(Buffer.from(raw?.body ?? ''), raw?.headers ?? {});
    expect(event).toMatchObject({ kind: 'payment', status: 'PAID', amount: 50_000 });
  });

  test('a refund answers PENDING first and settles by the refund.succeeded webhook', async () => {
    const created = await create(`don-${++n}`);
    stand.xendit.pay(created.providerReference, 'CREDIT_CARD');
    const refund = await stand.adapter.refund({
      idempotencyKey: `don-${n}-refund`,
      providerReference: created.providerReference,
      amount: 20_000,
      currency: 'IDR',
      reason: 'requested',
    });
    expect(refund).toMatchObject({ status: 'PENDING', amount: 20_000 });
    stand.xendit.settleRefund(refund.refundId);
    await stand.xendit.refundNotifier.settled();
    const raw = stand.refunds.received.at(-1);
    expect(JSON.parse(raw?.body ?? '{}')).toMatchObject({
      event: 'refund.succeeded',
      data: { id: refund.refundId },
    });
    const event = stand.adapter.parseWebhook(Buffer.from(raw?.body ?? ''), raw?.headers ?? {});
    expect(event).toMatchObject({ kind: 'refund', status: 'SUCCEEDED', refundId: refund.refundId });
    const read = await stand.adapter.fetchPayment(created.providerReference);
    expect(read.refunds).toEqual([
      { refundId: refund.refundId, status: 'SUCCEEDED', amount: 20_000 },
    ]);
  });

  test('the idempotency-key header replays a refund and refuses another body', async () => {
    const created = await create(`don-${++n}`);
    stand.xendit.pay(created.providerReference, 'OVO');
    const request = {
      idempotencyKey: `don-${n}-refund`,
      providerReference: created.providerReference,
      amount: 5_000,
      currency: 'IDR',
      reason: 'requested',
    };
    const first = await stand.adapter.refund(request);
    expect(await stand.adapter.refund(request)).toEqual(first);
    const other = await fetch(`${stand.xendit.url}/refunds`, {
      method: 'POST',
      headers: {
        ...auth,
        'content-type': 'application/json',
        'idempotency-key': request.idempotencyKey,
      },
      body: JSON.stringify({
        invoice_id: created.providerReference,
        amount: 6_000,
        currency: 'IDR',
      }),
    });
    expect(other.status).toBe(409);
    expect(await other.json()).toMatchObject({ error_code: 'IDEMPOTENCY_ERROR' });
  });

  test('refunds list pages with has_more and after_id', async () => {
    const created = await create(`don-${++n}`);
    stand.xendit.pay(created.providerReference, 'CREDIT_CARD');
    for (const i of [1, 2, 3]) {
      const refund = await stand.adapter.refund({
        idempotencyKey: `don-${n}-r${i}`,
        providerReference: created.providerReference,
        amount: 1_000,
        currency: 'IDR',
        reason: 'requested',
      });
      stand.xendit.settleRefund(refund.refundId);
    }
    const page = (await (
      await fetch(`${stand.xendit.url}/refunds?invoice_id=${created.providerReference}&limit=2`, {
        headers: auth,
      })
    ).json()) as { data: unknown[]; has_more: boolean };
    expect(page).toMatchObject({ has_more: true });
    expect(page.data).toHaveLength(2);
    expect((await stand.adapter.fetchPayment(created.providerReference)).refunds).toHaveLength(3);
  });

  test('fault knobs: a 503 is transient for the adapter and changes nothing', async () => {
    const created = await create(`don-${++n}`);
    stand.xendit.faults.add('GET /v2/invoices', { kind: 'status', status: 503 });
    await expect(stand.adapter.fetchPayment(created.providerReference)).rejects.toBeInstanceOf(
      ProviderUnavailable,
    );
    expect((await stand.adapter.fetchPayment(created.providerReference)).status).toBe('PENDING');
  });
});
