import type { ChildEntry } from '../support/child-entry';
import { deriveUuid } from '../../src/idempotency/idempotency-key';
import { clientAScope, postDonation, waitForStatus } from '../support/donations';
import { freePort } from '../support/free-port';
import {
  CLIENT_SECRET,
  createCampaign,
  donationBody,
  eventually,
  startStack,
} from '../support/stack';
import type { Stack } from '../support/stack';
import { spawnWorker } from '../support/worker-process';

const METRICS_TOKEN = 'worker-scrape-token-0123456789';

/** The value of one Prometheus series, e.g. `name{label="x"}`, or undefined when absent. */
function seriesValue(text: string, name: string, labels: Record<string, string> = {}) {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) {
      return Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return undefined;
}

/**
 * What operators scrape: the API's /metrics (HTTP rate and latency by route pattern, signal lag,
 * LMDB size) and the worker's own endpoint (the Temporal SDK's metrics and galang's worker
 * metrics), with a real donation through the real stack and the real worker entry point.
 */
describe('metrics', () => {
  let stack: Stack;
  let worker: ChildEntry;
  let workerMetricsUrl: string;

  beforeAll(async () => {
    // The first donation waits through a createPayment retry (backoff 1 s, then 2 s): the edge
    // must wait longer than that on a loaded machine rather than answer PENDING.
    stack = await startStack({
      noWorker: true,
      autoPayMs: 100,
      env: { EARLY_RETURN_MS: '30000' },
    });
    const port = await freePort();
    workerMetricsUrl = `http://127.0.0.1:${port}/metrics`;
    worker = await spawnWorker(stack, { metricsPort: port, env: { METRICS_TOKEN } });
  });
  afterAll(async () => {
    await worker.stop();
    await stack.stop();
  });
  const scrapeWorker = (authorization = `Bearer ${METRICS_TOKEN}`) =>
    fetch(workerMetricsUrl, { headers: { authorization } });

  it("wants the METRICS_TOKEN on the worker's endpoint, like the API's", async () => {
    for (const authorization of ['', 'Bearer wrong-token-0123456789']) {
      const refused = await scrapeWorker(authorization);
      expect(refused.status).toBe(401);
      expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await refused.json()).toMatchObject({ code: 'unauthorized' });
    }
    const scraped = await scrapeWorker();
    expect(scraped.status).toBe(200);
    expect(scraped.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await scraped.text()).toMatch(/^temporal_/m);
  });

  it('counts a donation on both endpoints: HTTP by route, signal lag, LMDB, SDK and worker metrics', async () => {
    const campaignId = await createCampaign(stack.db);
    const key = `metrics-${Date.now()}`;
    const id = deriveUuid(clientAScope(key));
    // The gateway fails until the worker has retried startPayment once, then recovers.
    stack.simulator.plan(id, { errorRate: 1 });
    const posted = postDonation(stack.apiUrl, key, donationBody(campaignId));
    await eventually(async () => {
      const body = await (await scrapeWorker()).text();
      return body.includes('galang_activity_retries_total{activityType="startPayment"')
        ? true
        : undefined;
    });
    stack.simulator.plan(id, {});
    expect((await posted).status).toBe(202);
    await waitForStatus(stack, id, 'CONFIRMED');
    const read = await fetch(`${stack.apiUrl}/v1/donations/${id}`, {
      headers: { authorization: `Bearer ${CLIENT_SECRET}` },
    });
    expect(read.status).toBe(200);
    expect((await fetch(`${stack.apiUrl}/no/such/${id}`)).status).toBe(404);

    const api = await (await fetch(`${stack.apiUrl}/metrics`)).text();
    const http = 'galang_http_request_duration_seconds_count';
    expect(
      seriesValue(api, http, { method: 'POST', route: '/v1/donations', status_code: '202' }),
    ).toBe(1);
    expect(
      seriesValue(api, http, { method: 'GET', route: '/v1/donations/:id', status_code: '200' }),
    ).toBe(1);
    expect(seriesValue(api, http, { route: 'unmatched', status_code: '404' })).toBe(1);
    // The pattern, never the raw URL: no donation id appears in any label.
    expect(api).not.toContain(id);
    expect(
      // Each provider's webhook has a route of its own (its own body limit).
      seriesValue(api, 'galang_http_request_duration_seconds_count', {
        route: '/v1/webhooks/simulator',
        status_code: '200',
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      seriesValue(api, 'galang_webhook_signal_lag_seconds_count', {
        provider: 'simulator',
        path: 'request',
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(seriesValue(api, 'galang_lmdb_entries', { db: 'records' })).toBe(1);
    // Its claim moved to the answers when it completed.
    expect(seriesValue(api, 'galang_lmdb_entries', { db: 'claims' })).toBe(0);
    expect(seriesValue(api, 'galang_lmdb_claims_used_bytes')).toBeGreaterThan(0);
    expect(seriesValue(api, 'galang_lmdb_used_bytes')).toBeGreaterThan(0);
    expect(seriesValue(api, 'galang_lmdb_map_bytes')).toBeGreaterThan(0);

    const text = await eventually(async () => {
      const body = await (await scrapeWorker()).text();
      return body.includes('galang_donation_outcomes_total') ? body : undefined;
    });
    // galang's own worker metrics carry the SDK's custom-metric tags (taskQueue, camelCase).
    const taskQueue = stack.config.temporal.taskQueue;
    expect(
      seriesValue(text, 'galang_donation_outcomes_total', { taskQueue, status: 'CONFIRMED' }),
    ).toBe(1);
    expect(seriesValue(text, 'galang_donation_confirmation_seconds_count', { taskQueue })).toBe(1);
    expect(
      seriesValue(text, 'galang_activity_retries_total', { activityType: 'startPayment' }),
    ).toBeGreaterThanOrEqual(1);
    // The SDK's built-in metrics, snake_case.
    const queue = { task_queue: taskQueue };
    expect(
      seriesValue(text, 'temporal_workflow_task_schedule_to_start_latency_count', queue),
    ).toBeGreaterThan(0);
    // The donation's steps run as local activities: no activity task waits on a queue.
    expect(
      seriesValue(text, 'temporal_local_activity_execution_latency_count', queue),
    ).toBeGreaterThan(0);
    expect(seriesValue(text, 'temporal_workflow_completed_total', queue)).toBeGreaterThanOrEqual(1);
  });
});
