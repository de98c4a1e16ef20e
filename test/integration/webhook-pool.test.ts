import { randomUUID } from 'node:crypto';
import { DEV_SIMULATOR_SECRET } from '../../src/config/config';
import { signStandardWebhook } from '../../src/providers/standard-webhooks';
import { createDatabase } from '../../src/db/database';
import { startStack } from '../support/stack';
import type { Stack } from '../support/stack';
import { testState } from '../support/test-env';

/** Bounds a wait that, if the property is broken, would never end. */
function within<T>(promise: Promise<T>, what: string, ms = 20_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      reject(new Error(`${what} did not happen`));
    }, ms);
  });
  return Promise.race([promise, bound]).finally(() => {
    clearTimeout(timer);
  });
}

/**
 * Webhook intake has a small Postgres pool of its own, so public reads cannot make a provider's
 * notification wait for a connection. Proven without a clock: the test holds every connection
 * of the API's pool, so a public read queues behind them, and a webhook is still verified,
 * recorded and answered. (The latency under a real flood is measured by `npm run bench:webhooks`.)
 */
describe('webhook intake while the API pool is exhausted', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ noWorker: true });
  });
  afterAll(async () => {
    await stack.stop();
  });

  const webhook = (id: string, paymentId: string): Promise<Response> => {
    const body = JSON.stringify({
      type: 'payment.updated',
      data: {
        id: paymentId,
        reference: randomUUID(),
        status: 'settled',
        amount: 1000,
        currency: 'IDR',
        occurred_at: new Date().toISOString(),
      },
    });
    const timestamp = Math.floor(Date.now() / 1000);
    return fetch(`${stack.apiUrl}/v1/webhooks/simulator`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signStandardWebhook(DEV_SIMULATOR_SECRET, id, timestamp, body),
      },
      body,
    });
  };

  it('records and answers a webhook while public reads wait for the API pool', async () => {
    // The API's pool is `stack.db` (5 connections); hold all of them until released.
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    let held = 0;
    const holders = Array.from({ length: 5 }, () =>
      stack.db.connection().execute(async () => {
        held++;
        await gate;
      }),
    );
    const observer = createDatabase({ connectionString: testState().databaseUrl, max: 1 });
    try {
      await within(
        (async () => {
          while (held < 5) await new Promise((resolve) => setImmediate(resolve));
        })(),
        'holding the API pool',
      );

      let readSettled = false;
      const read = fetch(`${stack.apiUrl}/v1/campaigns/c-${randomUUID()}/progress`).finally(() => {
        readSettled = true;
      });

      const paymentId = `sim_${randomUUID()}`;
      const response = await within(
        webhook(`msg_${randomUUID()}`, paymentId),
        'the webhook answer',
      );
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ received: true, outcome: 'unknown-donation' });
      const recorded = await observer
        .selectFrom('webhook_inbox')
        .select('id')
        .where('raw_body', 'like', `%${paymentId}%`)
        .execute();
      expect(recorded).toHaveLength(1);
      // The read that went to Postgres is still queued for the API's pool: it was starved.
      expect(readSettled).toBe(false);

      release();
      expect((await within(read, 'the read after release')).status).toBe(404);
    } finally {
      release();
      await Promise.all(holders);
      await observer.destroy();
    }
  });
});
