import { randomUUID } from 'node:crypto';
import { DEV_SIMULATOR_SECRET } from '../../src/config/config';
import { signStandardWebhook } from '../../src/providers/standard-webhooks';
import { startStack } from '../support/stack';
import type { Stack } from '../support/stack';
import { TcpProxy } from '../support/tcp-proxy';
import { testState } from '../support/test-env';

const ROUNDS = 7;
const PER_PHASE = 15;
const FLOOD_CONCURRENCY = 30;

/** The nearest-rank percentile of samples. */
function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

/**
 * Webhook intake has a small Postgres pool of its own: anonymous reads of random campaign ids,
 * each a Postgres query on the API's pool, cannot make a provider's notification wait for a
 * connection. Postgres is reached through a proxy that delays every packet, so each query holds
 * its connection long enough for the flood to keep the API's pool busy with a queue behind it.
 * Idle and flood phases alternate, so whatever else loads this machine weighs on both.
 */
describe('webhook intake under a flood of public reads', () => {
  let stack: Stack;
  let postgres: Awaited<ReturnType<typeof TcpProxy.start>>;

  beforeAll(async () => {
    postgres = await TcpProxy.start('127.0.0.1:5432');
    postgres.delayMs = 40;
    const url = new URL(testState().databaseUrl);
    url.port = String(postgres.port);
    stack = await startStack({ noWorker: true, apiDatabaseUrl: url.toString() });
  });
  afterAll(async () => {
    await stack.stop();
    await postgres.close();
  });

  /** A signed notification about no donation we know: verified, recorded, marked processed. */
  const webhook = async (): Promise<number> => {
    const body = JSON.stringify({
      type: 'payment.updated',
      data: {
        id: `sim_${randomUUID()}`,
        reference: randomUUID(),
        status: 'settled',
        amount: 1000,
        currency: 'IDR',
        occurred_at: new Date().toISOString(),
      },
    });
    const id = `msg_${randomUUID()}`;
    const timestamp = Math.floor(Date.now() / 1000);
    const started = performance.now();
    const response = await fetch(`${stack.apiUrl}/v1/webhooks/simulator`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signStandardWebhook(DEV_SIMULATOR_SECRET, id, timestamp, body),
      },
      body,
    });
    const elapsed = performance.now() - started;
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true, outcome: 'unknown-donation' });
    return elapsed;
  };

  /** Readers asking for campaigns that do not exist, until stopped; their latencies. */
  const flood = () => {
    let running = true;
    const latencies: number[] = [];
    const reader = async () => {
      while (running) {
        const started = performance.now();
        const response = await fetch(`${stack.apiUrl}/v1/campaigns/c-${randomUUID()}/progress`);
        await response.arrayBuffer();
        latencies.push(performance.now() - started);
      }
    };
    const readers = Array.from({ length: FLOOD_CONCURRENCY }, reader);
    return {
      latencies,
      stop: async () => {
        running = false;
        await Promise.all(readers);
      },
    };
  };

  it('keeps webhook p99 within 2× of idle', async () => {
    for (let i = 0; i < 10; i++) await webhook();
    const idle: number[][] = [];
    const flooded: number[][] = [];
    const reads: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      idle.push([]);
      for (let i = 0; i < PER_PHASE; i++) idle[round]?.push(await webhook());
      const readers = flood();
      await new Promise((resolve) => setTimeout(resolve, 300));
      flooded.push([]);
      for (let i = 0; i < PER_PHASE; i++) flooded[round]?.push(await webhook());
      await readers.stop();
      reads.push(...readers.latencies);
    }
    // Each phase's p99 per round, then the median over rounds: a stall of this shared machine
    // (seconds, now and then, with other suites running) spoils a round, not the verdict.
    const p99 = (rounds: number[][]) =>
      percentile(
        rounds.map((r) => percentile(r, 99)),
        50,
      );
    const [idleP99, floodP99] = [p99(idle), p99(flooded)];
    const all = (rounds: number[][]) => rounds.flat();
    process.stdout.write(
      `webhook p99 (median of ${ROUNDS} rounds) idle ${idleP99.toFixed(1)} ms, flooded ` +
        `${floodP99.toFixed(1)} ms (${(floodP99 / idleP99).toFixed(2)}×); pooled p99 idle ` +
        `${percentile(all(idle), 99).toFixed(1)} ms, flooded ${percentile(all(flooded), 99).toFixed(1)} ms; ` +
        `p50 idle ${percentile(all(idle), 50).toFixed(1)} ms; flood reads p50 ${percentile(reads, 50).toFixed(1)} ms\n`,
    );
    // The flood was real: its own reads queued for the API's pool far longer than a webhook
    // takes, which is what a webhook sharing that pool would have waited too.
    expect(percentile(reads, 50)).toBeGreaterThan(1.5 * percentile(all(idle), 50));
    expect(floodP99).toBeLessThanOrEqual(2 * idleP99);
  }, 150_000);
});
