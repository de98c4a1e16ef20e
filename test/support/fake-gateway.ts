import type { FastifyInstance } from 'fastify';

/**
 * What every loopback stand-in for a hosted payment API offers a test: its URL, how often money
 * moved per idempotency key, and a way to move a payment as the donor or the bank would.
 */
export interface FakeGateway {
  app: FastifyInstance;
  url: string;
  /** Payments created, by the gateway's own idempotency (order id, idempotency key). */
  charges: Map<string, number>;
  /** Refunds created, by refund key or idempotency key. */
  refunds: Map<string, number>;
  /** Moves a payment to one of the provider's own statuses. */
  set(id: string, status: string): void;
  close(): Promise<void>;
}

export async function listenFake(
  app: FastifyInstance,
): Promise<{ app: FastifyInstance; url: string; close(): Promise<void> }> {
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url, close: () => app.close() };
}

export const basicAuth = (key: string) => `Basic ${Buffer.from(`${key}:`).toString('base64')}`;
