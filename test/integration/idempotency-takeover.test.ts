import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import authPlugin from '../../src/auth/auth-plugin';
import errorHandlerPlugin from '../../src/http/error-handler';
import idempotencyPlugin from '../../src/idempotency/idempotency-plugin';
import { removeStoreFiles } from '../../src/idempotency/claims-location';
import { scopedKey } from '../../src/idempotency/idempotency-key';
import { IdempotencyStore } from '../../src/idempotency/idempotency-store';
import { createMetrics } from '../../src/observability/metrics';

/**
 * One key, one answer, when a claim changes hands: a request whose lease ran out while it
 * worked finishes after the request that took its claim over. The edge's real plugins on a
 * route whose handler the test releases; the store's clock is the test's.
 */
describe('a request whose claim was taken over while it worked', () => {
  let dir: string;
  let now: number;
  let store: IdempotencyStore;
  let app: FastifyInstance;
  let calls: number;
  /** `finish[n]()` lets call n + 1 answer. */
  let finish: (() => void)[];

  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'galang-takeover-'));
    now = 1_000_000;
    store = new IdempotencyStore({ path: dir, ttlSeconds: 600, leaseSeconds: 5, now: () => now });
    app = Fastify({ logger: false });
    await app.register(errorHandlerPlugin);
    await app.register(authPlugin, {
      apiKeys: new Map([['client-a', 'secret-a']]),
      operatorKeys: new Map(),
      codecKeys: new Map(),
    });
    await app.register(idempotencyPlugin, { store, metrics: createMetrics().idempotency });
    // Each call makes a different thing, once the test lets it finish.
    calls = 0;
    finish = [];
    const mayFinish = [0, 1, 2].map(() => new Promise<void>((resolve) => finish.push(resolve)));
    app.post('/v1/things', { config: { auth: 'client', idempotent: true } }, async (_r, reply) => {
      const call = ++calls;
      await mayFinish[call - 1];
      return reply.code(201).header('location', `/v1/things/${call}`).send({ call });
    });
  });
  afterEach(async () => {
    await app.close();
    await store.close();
    removeStoreFiles(dir);
  });

  const key = scopedKey({ clientId: 'client-a', method: 'POST', route: '/v1/things', key: 'k-1' });
  const post = () =>
    app.inject({
      method: 'POST',
      url: '/v1/things',
      headers: {
        authorization: 'Bearer secret-a',
        'idempotency-key': 'k-1',
        'content-type': 'application/json',
      },
      payload: JSON.stringify({ name: 'the same request every time' }),
    });

  it('sends the answer stored by the request that took over, not its own', async () => {
    const first = post();
    await waitUntil(() => calls === 1);

    now += 6_000; // the first request's lease is over while it still works
    finish[1]?.();
    const second = await post();
    expect(second.statusCode).toBe(201);
    expect(second.json()).toEqual({ call: 2 });
    expect(second.headers['idempotent-replayed']).toBeUndefined();

    finish[0]?.();
    const late = await first;
    // Before the fix the late finisher sent its own answer ({ call: 1 }): one key, two answers.
    expect(late.statusCode).toBe(201);
    expect(late.body).toBe(second.body);
    expect(late.headers.location).toBe('/v1/things/2');
    expect(late.headers['idempotent-replayed']).toBe('true');
    expect((await post()).body).toBe(second.body);
    expect(store.get(key)).toMatchObject({ status: 'COMPLETED' });
  });

  it('answers 409 while the request that took over still works, then its answer', async () => {
    const first = post();
    await waitUntil(() => calls === 1);
    now += 6_000;
    const second = post();
    await waitUntil(() => calls === 2);

    finish[0]?.();
    const late = await first;
    expect(late.statusCode).toBe(409);
    expect(late.headers['retry-after']).toBe('1');
    expect(late.json()).toMatchObject({ code: 'idempotency-key-in-use' });

    finish[1]?.();
    expect((await second).json()).toEqual({ call: 2 });
    expect((await post()).json()).toEqual({ call: 2 });
  });
});

async function waitUntil(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  if (!check()) throw new Error('condition not met');
}
