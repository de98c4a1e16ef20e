import { randomBytes, randomUUID } from 'node:crypto';
import { signStandardWebhook } from '../../src/providers/standard-webhooks';
import { midtransSignature } from '../../src/providers/midtrans/midtrans-provider';
import { signStripe } from '../support/stripe-signing';
import { DEV_SIMULATOR_SECRET } from '../../src/config/config';
import {
  MIDTRANS_SERVER_KEY,
  STRIPE_WEBHOOK_SECRET,
  XENDIT_CALLBACK_TOKEN,
  startStack,
} from '../support/stack';
import type { Stack } from '../support/stack';

/** `POST /v1/webhooks/:provider` on the real app and database. */
describe('webhook intake', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack.stop();
  });

  /** Inbox rows holding exactly these bodies (other test files write to the same table). */
  const rowsFor = async (bodies: Iterable<string | Buffer>) => {
    const wanted = [...bodies].map((b) => b.toString());
    if (wanted.length === 0) return 0;
    const rows = await stack.db
      .selectFrom('webhook_inbox')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('raw_body', 'in', wanted)
      .executeTakeFirstOrThrow();
    return rows.n;
  };

  const send = (provider: string, body: string | Buffer, headers: Record<string, string>) =>
    stack.app.inject({
      method: 'POST',
      url: `/v1/webhooks/${provider}`,
      headers: { 'content-type': 'application/json', ...headers },
      payload: body,
    });

  const simulatorHeaders = (body: string, id = `msg_${randomUUID()}`) => {
    const timestamp = Math.floor(Date.now() / 1000);
    return {
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signStandardWebhook(DEV_SIMULATOR_SECRET, id, timestamp, body),
    };
  };
  const stray = (reference = randomUUID()) =>
    JSON.stringify({
      type: 'payment.updated',
      data: {
        id: `sim_${randomUUID()}`,
        reference,
        status: 'settled',
        amount: 1000,
        currency: 'IDR',
        occurred_at: new Date().toISOString(),
      },
    });

  it('refuses a bad signature (401), a malformed body (400) and an unknown provider (404), writing nothing', async () => {
    const body = stray();
    const garbage = '{"not":"a notification"}';
    const forged = await send('simulator', body, {
      ...simulatorHeaders(body),
      'webhook-signature': 'v1,AAAA',
    });
    expect(forged.statusCode).toBe(401);
    expect(forged.json()).toMatchObject({ code: 'webhook-signature-invalid' });
    expect((await send('simulator', garbage, simulatorHeaders(garbage))).statusCode).toBe(400);
    expect((await send('paypal', body, {})).statusCode).toBe(404);
    expect((await send('midtrans', body, {})).statusCode).toBe(401);
    expect(await rowsFor([body, garbage])).toBe(0);
  });

  it('records a stray event for an unknown donation, answers 200 and counts it', async () => {
    const body = stray();
    const response = await send('simulator', body, simulatorHeaders(body));
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ received: true, outcome: 'unknown-donation' });
    const metrics = await stack.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(
      /galang_webhooks_unknown_donation_total\{provider="simulator"\} [1-9]/,
    );
  });

  it('records a Xendit dispute for review, answers 200, counts it and signals nothing', async () => {
    const id = `mi-dspt-${randomUUID()}`;
    const body = JSON.stringify({
      event: 'dispute.action_required',
      id,
      channel_code: 'CARDS',
      status: 'ACTION_REQUIRED',
      currency: 'IDR',
      amount: { initial: '50000.00', terminal: null },
      updated_at: new Date().toISOString(),
      payment_id: `py-${randomUUID()}`,
      reference_id: 'ref-1',
    });
    const response = await send('xendit', body, { 'x-callback-token': XENDIT_CALLBACK_TOKEN });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ received: true, outcome: 'ignored' });
    const row = await stack.db
      .selectFrom('webhook_inbox')
      .select(['last_error', 'processed_at'])
      .where('raw_body', '=', body)
      .executeTakeFirstOrThrow();
    expect(row.last_error).toMatch(new RegExp(`^ignored: needs-review: Xendit dispute ${id} `));
    expect(row.processed_at).not.toBeNull();
    const metrics = await stack.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(/galang_webhooks_needs_review_total\{provider="xendit"\} [1-9]/);
  });

  it('answers a duplicate at once with 200 and records it once', async () => {
    const body = stray();
    const headers = simulatorHeaders(body);
    expect((await send('simulator', body, headers)).json()).toMatchObject({
      outcome: 'unknown-donation',
    });
    expect((await send('simulator', body, headers)).json()).toMatchObject({ outcome: 'duplicate' });
    expect(await rowsFor([body])).toBe(1);
  });

  it('dedupes each provider by its own event key', async () => {
    const orderId = `order-${randomUUID()}`;
    const midtrans = {
      order_id: orderId,
      transaction_id: randomUUID(),
      status_code: '200',
      gross_amount: '1000.00',
      transaction_status: 'settlement',
      currency: 'IDR',
      signature_key: midtransSignature(orderId, '200', '1000.00', MIDTRANS_SERVER_KEY),
    };
    expect((await send('midtrans', JSON.stringify(midtrans), {})).json()).toMatchObject({
      outcome: 'unknown-donation',
    });
    expect((await send('midtrans', JSON.stringify(midtrans, null, 1), {})).json()).toMatchObject({
      outcome: 'duplicate',
    });

    const invoice = JSON.stringify({
      id: `inv_${randomUUID()}`,
      external_id: 'x',
      status: 'PAID',
      amount: 1000,
      currency: 'IDR',
    });
    const token = { 'x-callback-token': XENDIT_CALLBACK_TOKEN };
    expect((await send('xendit', invoice, token)).json()).toMatchObject({
      outcome: 'unknown-donation',
    });
    expect((await send('xendit', invoice, token)).json()).toMatchObject({ outcome: 'duplicate' });

    const event = JSON.stringify({
      id: `evt_${randomUUID()}`,
      type: 'payment_intent.succeeded',
      created: 1,
      data: {
        object: { id: 'pi_x', amount: 100_000, currency: 'idr', status: 'succeeded', metadata: {} },
      },
    });
    const signature = {
      'stripe-signature': signStripe(STRIPE_WEBHOOK_SECRET, Math.floor(Date.now() / 1000), event),
    };
    expect((await send('stripe', event, signature)).json()).toMatchObject({
      outcome: 'unknown-donation',
    });
    expect((await send('stripe', event, signature)).json()).toMatchObject({ outcome: 'duplicate' });
  });

  it('survives a few thousand malformed requests: never a 5xx, never a write', async () => {
    const accepted: string[] = [];
    const refused: string[] = [];
    const providers = ['simulator', 'midtrans', 'xendit', 'stripe', 'nope', 'x'.repeat(40)];
    const bodies = [
      () => randomBytes(Math.floor(Math.random() * 300)),
      () => Buffer.from('{"data":' + JSON.stringify(randomBytes(20).toString('latin1')) + '}'),
      () =>
        Buffer.from(
          JSON.stringify({ data: { id: 1, reference: null, status: 'settled', amount: 'NaN' } }),
        ),
      () => Buffer.from('['.repeat(5000)),
      () =>
        Buffer.from(
          JSON.stringify({
            order_id: 'o',
            status_code: '200',
            gross_amount: '1.00',
            signature_key: 'f'.repeat(128),
          }),
        ),
      () => Buffer.from(JSON.stringify({ id: 'evt', type: 'charge.refunded', data: null })),
      () => Buffer.alloc(0),
    ];
    const headerSets = [
      () => ({}),
      () => ({ 'webhook-id': 'msg', 'webhook-timestamp': 'yesterday', 'webhook-signature': 'v1,' }),
      () => ({
        'webhook-id': randomUUID(),
        'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
        'webhook-signature': `v1,${randomBytes(32).toString('base64')} v2,zzz`,
      }),
      () => ({ 'stripe-signature': `t=${Date.now()},v1=${randomBytes(32).toString('hex')}` }),
      () => ({ 'stripe-signature': 't=,v1=,,=' }),
      () => ({ 'x-callback-token': randomBytes(16).toString('hex') }),
      () => ({ 'content-type': 'text/plain' }),
    ];
    const statuses = new Map<number, number>();
    const record = (body: string | Buffer, status: number) => {
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      expect(status).toBeLessThan(500);
      // Postgres text holds no NUL; such a body can only have been refused.
      const text = body.toString();
      if (!text.includes('\u0000')) (status === 200 ? accepted : refused).push(text);
    };
    for (let i = 0; i < 3000; i++) {
      const provider = providers[i % providers.length] ?? 'simulator';
      const body = bodies[i % bodies.length]?.() ?? Buffer.alloc(0);
      const headers = headerSets[Math.floor(i / 7) % headerSets.length]?.() ?? {};
      const response = await send(provider, body, headers);
      record(body, response.statusCode);
    }
    // Correctly signed but malformed simulator bodies too: 400, not 500.
    for (let i = 0; i < 500; i++) {
      const body = JSON.stringify({
        type: 'payment.updated',
        data: {
          id: randomUUID(),
          status: ['settled', 'weird', 7][i % 3],
          amount: [1, -1, 1.5, 'x'][i % 4],
          currency: 'IDR',
          reference: 'r',
          occurred_at: 'now',
        },
      });
      const response = await send('simulator', body, simulatorHeaders(body));
      record(body, response.statusCode);
    }
    expect([...statuses.keys()].every((s) => s < 500)).toBe(true);
    expect(statuses.get(401)).toBeGreaterThan(0);
    expect(await rowsFor(new Set(refused))).toBe(0);
    expect(await rowsFor(accepted)).toBe(accepted.length);
  });
});
