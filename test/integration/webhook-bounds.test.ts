import { request } from 'node:http';
import { randomUUID } from 'node:crypto';
import { eventually, startStack } from '../support/stack';
import type { Stack } from '../support/stack';

/**
 * What an unauthenticated caller can make the webhook route hold: no more than each provider's
 * body limit per request, and no more than WEBHOOK_MAX_IN_FLIGHT requests at once per process.
 */
describe('webhook intake bounds', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ noWorker: true, env: { WEBHOOK_MAX_IN_FLIGHT: '2' } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  const post = (
    provider: string,
    body: string | ReadableStream<Uint8Array>,
    init: RequestInit = {},
  ) =>
    fetch(`${stack.apiUrl}/v1/webhooks/${provider}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      ...init,
    });
  /** A JSON body of exactly `bytes` bytes that names `marker`, so its inbox row can be sought. */
  const bodyOf = (bytes: number, marker: string) => {
    const head = `{"marker":"${marker}","pad":"`;
    return `${head}${'x'.repeat(bytes - head.length - 2)}"}`;
  };
  const rowsNaming = async (marker: string) =>
    (
      await stack.db
        .selectFrom('webhook_inbox')
        .select('id')
        .where('raw_body', 'like', `%${marker}%`)
        .execute()
    ).length;
  /** `galang_webhooks_rejected_total` for one reason, summed over providers. */
  const rejected = async (reason: string) => {
    const text = await (await fetch(`${stack.apiUrl}/metrics`)).text();
    return text
      .split('\n')
      .filter((l) => l.startsWith('galang_webhooks_rejected_total{'))
      .filter((l) => l.includes(`reason="${reason}"`))
      .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
  };

  it("answers 413 past each provider's own limit, before verifying or recording anything", async () => {
    const limits = stack.config.webhooks.bodyLimits;
    const marker = randomUUID();
    const tooLargeBefore = await rejected('too-large');

    const overSimulator = bodyOf(limits.simulator + 1, marker);
    const refused = await post('simulator', overSimulator);
    expect(refused.status).toBe(413);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await refused.json()).toMatchObject({ code: 'payload-too-large', status: 413 });
    // The same bytes are within Stripe's limit: read, then refused for their signature.
    expect((await post('stripe', overSimulator)).status).toBe(401);
    expect((await post('midtrans', bodyOf(limits.midtrans, marker))).status).toBe(401);
    expect((await post('midtrans', bodyOf(limits.midtrans + 1, marker))).status).toBe(413);
    expect((await post('stripe', bodyOf(limits.stripe + 1, marker))).status).toBe(413);
    // A body sent in chunks, without Content-Length, is cut at the limit as well.
    const chunks = [bodyOf(limits.xendit, marker), 'more'];
    const streamed = await post(
      'xendit',
      new ReadableStream({
        pull(controller) {
          const next = chunks.shift();
          if (next === undefined) controller.close();
          else controller.enqueue(new TextEncoder().encode(next));
        },
      }),
      { duplex: 'half' },
    );
    expect(streamed.status).toBe(413);
    // An unknown provider reads next to nothing.
    expect((await post('paypal', bodyOf(2048, marker))).status).toBe(413);
    expect((await post('paypal', '{}')).status).toBe(404);

    expect(await rowsNaming(marker)).toBe(0);
    expect(await rejected('too-large')).toBe(tooLargeBefore + 5);
  });

  it('answers 503 with Retry-After past the requests it holds at once, and frees a place per answer', async () => {
    const opening = '{"partial":';
    /** A request whose body is not finished: it holds its place until answered or gone. */
    const holder = () => {
      const held = request(`${stack.apiUrl}/v1/webhooks/simulator`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': '100' },
      });
      const answered = new Promise<number | undefined>((resolve) => {
        held.on('response', (response) => {
          response.resume();
          resolve(response.statusCode);
        });
        held.on('error', () => {
          resolve(undefined);
        });
      });
      held.write(opening);
      return {
        held,
        answered,
        finish: () => held.end(`${' '.repeat(100 - opening.length - 2)}1}`),
      };
    };
    // An unknown provider's route is bounded too, and answers a plain 404 when let in.
    const probe = () => post('paypal', '{}');
    const busyBefore = await rejected('busy');

    const [first, second] = [holder(), holder()];
    // Once both hold their place, the next request is refused before its body is read.
    const refused = await eventually(async () => {
      const answer = await probe();
      if (answer.status === 503) return answer;
      await answer.arrayBuffer();
      return undefined;
    });
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(await refused.json()).toMatchObject({ code: 'service-unavailable', status: 503 });
    expect(await rejected('busy')).toBeGreaterThan(busyBefore);
    // Other routes are not behind the bound.
    expect((await fetch(`${stack.apiUrl}/healthz`)).status).toBe(200);

    // A caller that goes away gives its place back...
    first.held.destroy();
    const admitted = await eventually(async () => {
      const answer = await probe();
      await answer.arrayBuffer();
      return answer.status === 503 ? undefined : answer.status;
    });
    expect(admitted).toBe(404);
    // ...and so does one that is answered: then both places are free again.
    second.finish();
    expect(await second.answered).toBe(401);
    const both = await Promise.all([probe(), probe()]);
    expect(both.map((a) => a.status)).toEqual([404, 404]);
  });
});
