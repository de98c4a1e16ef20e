import { ProviderUnavailable } from '../../src/providers/payment-provider';
import { createXenditProvider } from '../../src/providers/xendit/xendit-provider';
import { startSink } from '../support/standins/sink';
import { startXenditStandin } from '../support/standins/xendit';
import type { XenditStandin } from '../support/standins/xendit';

const secretKey = 'xnd_development_standin';
const callbackToken = 'standin-callback-token';
let invoices: Awaited<ReturnType<typeof startSink>>;
let refunds: Awaited<ReturnType<typeof startSink>>;
let xendit: XenditStandin;
let adapter: ReturnType<typeof createXenditProvider>;
let n = 0;

beforeEach(async () => {
  invoices = await startSink();
  refunds = await startSink();
  xendit = await startXenditStandin({
    secretKey,
    callbackToken,
    invoiceCallbackUrl: invoices.url,
    refundCallbackUrl: refunds.url,
    timeScale: 0,
  });
  adapter = createXenditProvider({
    baseUrl: xendit.url,
    secretKey,
    callbackTokens: [callbackToken],
  });
});
afterEach(async () => {
  await xendit.close();
  await invoices.close();
  await refunds.close();
});

const auth = { authorization: `Basic ${Buffer.from(`${secretKey}:`).toString('base64')}` };
const create = (reference: string, currency = 'IDR', amount = 50_000) =>
  adapter.createPayment({
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
      (await (await fetch(`${xendit.url}/v2/invoices/${id}`, { headers: auth })).json()) as {
        amount: number;
      };
    expect((await read(usd.providerReference)).amount).toBe(12.34);
    expect((await read(idr.providerReference)).amount).toBe(50_000);
    expect((await adapter.fetchPayment(usd.providerReference)).amount).toBe(1_234);
  });

  test('listing invoices by external_id answers an array; creation has no idempotency', async () => {
    const reference = `don-${++n}`;
    const body = JSON.stringify({ external_id: reference, amount: 10_000, currency: 'IDR' });
    const post = () =>
      fetch(`${xendit.url}/v2/invoices`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body,
      });
    await Promise.all([post(), post()]);
    const listed = (await (
      await fetch(`${xendit.url}/v2/invoices?external_id=${reference}`, { headers: auth })
    ).json()) as unknown[];
    expect(Array.isArray(listed)).toBe(true);
    expect(listed).toHaveLength(2);
  });

  test('expire! answers the invoice expired; xendit-node paths and its 404 code', async () => {
    const reference = `don-${++n}`;
    // xendit-node's createInvoice posts to `/v2/invoices/`, with the slash.
    const made = (await (
      await fetch(`${xendit.url}/v2/invoices/`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ external_id: reference, amount: 10_000, currency: 'IDR' }),
      })
    ).json()) as { id: string };
    const expire = (id: string) =>
      fetch(`${xendit.url}/invoices/${id}/expire!`, { method: 'POST', headers: auth });
    const expired = await expire(made.id);
    expect(expired.status).toBe(200);
    expect(await expired.json()).toMatchObject({ id: made.id, status: 'EXPIRED' });
    const unknown = await expire('5f4708b7bd394b0400b96276');
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error_code: 'INVOICE_NOT_FOUND_ERROR' });
  });

  test('callbacks carry the static x-callback-token (no signature) and are retried', async () => {
    const created = await create(`don-${++n}`);
    invoices.answer(500);
    xendit.pay(created.providerReference, 'CREDIT_CARD');
    await xendit.invoiceNotifier.settled();
    expect(xendit.invoiceNotifier.deliveries[0]?.attempts).toEqual([500, 200]);
    const raw = invoices.received.at(-1);
    expect(raw?.headers['x-callback-token']).toBe(callbackToken);
    expect(Object.keys(raw?.headers ?? {}).some((h) => h.includes('signature'))).toBe(false);
    const event = adapter.parseWebhook(Buffer.from(raw?.body ?? ''), raw?.headers ?? {});
    expect(event).toMatchObject({ kind: 'payment', status: 'PAID', amount: 50_000 });
  });

  test('a refund answers PENDING first and settles by the refund.succeeded webhook', async () => {
    const created = await create(`don-${++n}`);
    xendit.pay(created.providerReference, 'CREDIT_CARD');
    const refund = await adapter.refund({
      idempotencyKey: `don-${n}-refund`,
      providerReference: created.providerReference,
      amount: 20_000,
      currency: 'IDR',
      reason: 'requested',
    });
    expect(refund).toMatchObject({ status: 'PENDING', amount: 20_000 });
    xendit.settleRefund(refund.refundId);
    await xendit.refundNotifier.settled();
    const raw = refunds.received.at(-1);
    expect(JSON.parse(raw?.body ?? '{}')).toMatchObject({
      event: 'refund.succeeded',
      data: { id: refund.refundId },
    });
    const event = adapter.parseWebhook(Buffer.from(raw?.body ?? ''), raw?.headers ?? {});
    expect(event).toMatchObject({ kind: 'refund', status: 'SUCCEEDED', refundId: refund.refundId });
    const read = await adapter.fetchPayment(created.providerReference);
    expect(read.refunds).toEqual([
      { refundId: refund.refundId, status: 'SUCCEEDED', amount: 20_000 },
    ]);
  });

  test('the idempotency-key header replays a refund and refuses another body', async () => {
    const created = await create(`don-${++n}`);
    xendit.pay(created.providerReference, 'OVO');
    const request = {
      idempotencyKey: `don-${n}-refund`,
      providerReference: created.providerReference,
      amount: 5_000,
      currency: 'IDR',
      reason: 'requested',
    };
    const first = await adapter.refund(request);
    expect(await adapter.refund(request)).toEqual(first);
    const other = await fetch(`${xendit.url}/refunds`, {
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
    xendit.pay(created.providerReference, 'CREDIT_CARD');
    for (const i of [1, 2, 3]) {
      const refund = await adapter.refund({
        idempotencyKey: `don-${n}-r${i}`,
        providerReference: created.providerReference,
        amount: 1_000,
        currency: 'IDR',
        reason: 'requested',
      });
      xendit.settleRefund(refund.refundId);
    }
    const page = (await (
      await fetch(`${xendit.url}/refunds?invoice_id=${created.providerReference}&limit=2`, {
        headers: auth,
      })
    ).json()) as { data: unknown[]; has_more: boolean };
    expect(page).toMatchObject({ has_more: true });
    expect(page.data).toHaveLength(2);
    expect((await adapter.fetchPayment(created.providerReference)).refunds).toHaveLength(3);
  });

  test('fault knobs: a 503 is transient for the adapter and changes nothing', async () => {
    const created = await create(`don-${++n}`);
    xendit.faults.add('GET /v2/invoices', { kind: 'status', status: 503 });
    await expect(adapter.fetchPayment(created.providerReference)).rejects.toBeInstanceOf(
      ProviderUnavailable,
    );
    expect((await adapter.fetchPayment(created.providerReference)).status).toBe('PENDING');
  });
});
