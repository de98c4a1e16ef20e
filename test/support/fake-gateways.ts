import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';

/**
 * Loopback stand-ins for the hosted payment APIs, following their documented request and
 * response shapes closely enough to exercise galang's HTTP clients: authentication, the
 * idempotency each one offers, status reads, cancellation and refunds. They keep state in
 * memory and count how often money moved per idempotency key.
 */
export interface FakeGateway {
  app: FastifyInstance;
  url: string;
  /** Payments created, by the gateway's own idempotency (order id, idempotency key). */
  charges: Map<string, number>;
  refunds: Map<string, number>;
  /** Moves a payment to a status, as the donor or the bank would. */
  set(id: string, status: string): void;
  close(): Promise<void>;
}

async function listen(app: FastifyInstance, extra: Omit<FakeGateway, 'app' | 'url' | 'close'>) {
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url, ...extra, close: () => app.close() };
}

const basic = (key: string) => `Basic ${Buffer.from(`${key}:`).toString('base64')}`;

/** Xendit: /v2/invoices (X-IDEMPOTENCY-KEY), /invoices/:id/expire!, /refunds. */
export async function fakeXendit(secretKey: string): Promise<FakeGateway> {
  const app = Fastify();
  const invoices = new Map<string, Record<string, unknown>>();
  const byKey = new Map<string, string>();
  const charges = new Map<string, number>();
  const refunds = new Map<string, number>();
  app.addHook('onRequest', async (request, reply) => {
    if (request.headers.authorization !== basic(secretKey)) {
      return reply.code(401).send({ error_code: 'INVALID_API_KEY' });
    }
  });
  app.post('/v2/invoices', async (request) => {
    const key = String(request.headers['x-idempotency-key']);
    const existing = byKey.get(key);
    if (existing) return invoices.get(existing);
    const body = request.body as { external_id: string; amount: number; currency: string };
    const id = `inv_${randomUUID()}`;
    const invoice = {
      id,
      ...body,
      status: 'PENDING',
      invoice_url: `https://checkout.example/${id}`,
    };
    invoices.set(id, invoice);
    byKey.set(key, id);
    charges.set(key, 1);
    return invoice;
  });
  app.get<{ Params: { id: string } }>(
    '/v2/invoices/:id',
    async (request, reply) =>
      invoices.get(request.params.id) ??
      reply.code(404).send({ error_code: 'INVOICE_NOT_FOUND_ERROR' }),
  );
  app.post<{ Params: { id: string } }>('/invoices/:id/expire!', async (request, reply) => {
    const invoice = invoices.get(request.params.id);
    if (!invoice) return reply.code(404).send({ error_code: 'INVOICE_NOT_FOUND_ERROR' });
    if (invoice.status === 'PENDING') invoice.status = 'EXPIRED';
    return invoice;
  });
  app.post('/refunds', async (request) => {
    const key = String(request.headers['x-idempotency-key']);
    refunds.set(key, (refunds.get(key) ?? 0) + (refunds.has(key) ? 0 : 1));
    return { id: `rfd_${key}`, status: 'SUCCEEDED', ...(request.body as object) };
  });
  return listen(app, {
    charges,
    refunds,
    set: (id, status) => {
      const invoice = invoices.get(id);
      if (invoice) invoice.status = status;
    },
  });
}

export { fakeStripe } from './fake-stripe';
export type { FakeStripe } from './fake-stripe';
export { fakeMidtrans } from './fake-midtrans';
export type { FakeMidtrans } from './fake-midtrans';
