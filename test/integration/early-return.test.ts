import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/runtime/api-app';
import { removeStoreFiles } from '../../src/idempotency/claims-location';
import { deriveUuid } from '../../src/idempotency/idempotency-key';
import { IdempotencyStore } from '../../src/idempotency/idempotency-store';
import { createMetrics } from '../../src/observability/metrics';
import { createSimulatorProvider } from '../../src/providers/simulator/simulator-provider';
import { donationWorkflowId, paymentActionUpdateId, WorkflowType } from '../../workflows/contracts';
import { clientAScope, effectsOf, postDonation, waitForStatus } from '../support/donations';
import { TcpProxy } from '../support/tcp-proxy';
import { testState } from '../support/test-env';
import {
  CLIENT_SECRET,
  createCampaign,
  donationBody,
  eventually,
  startStack,
} from '../support/stack';
import type { Stack } from '../support/stack';

interface Accepted {
  id: string;
  status: string;
  paymentAction: { type: string; value: string } | null;
}

/** The provider answers this payment's calls only after this long: far past any budget here. */
const SLOW_PROVIDER_MS = 6_000;

/**
 * The early return of `POST /v1/donations` under a slow provider and a full edge: a PENDING 202
 * past the budget or the admission bound, the payment action on the GET once it exists, one
 * update per donation however many requests wait on it, and a retry that starts a failed run
 * again. Real Temporal, Postgres, LMDB and simulator; the provider's latency is planned per
 * payment, so "answered before the provider created the payment" is a fact, not a timing.
 */
describe('the early return', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({
      autoPayMs: 200,
      env: { EARLY_RETURN_MS: '500' },
    });
  });
  afterAll(async () => {
    await stack.stop();
  });

  const slowDonation = (key: string) => {
    const id = deriveUuid(clientAScope(key));
    stack.simulator.plan(id, { latencyMs: SLOW_PROVIDER_MS });
    return id;
  };
  const read = async (id: string, query = '') => {
    const response = await fetch(`${stack.apiUrl}/v1/donations/${id}${query}`, {
      headers: { authorization: `Bearer ${CLIENT_SECRET}` },
    });
    expect(response.status).toBe(200);
    return (await response.json()) as Accepted;
  };
  const earlyReturns = async (outcome: string) => {
    const metrics = await stack.app.inject({ method: 'GET', url: '/metrics' });
    const line = new RegExp(`galang_donation_early_returns_total\\{outcome="${outcome}"\\} (\\d+)`);
    return Number(line.exec(metrics.body)?.[1] ?? 0);
  };

  it('answers 202 PENDING past the budget; the answer is kept and the GET shows the action', async () => {
    const campaignId = await createCampaign(stack.db);
    const key = `slow-${Date.now()}`;
    const id = slowDonation(key);

    const first = await postDonation(stack.apiUrl, key, donationBody(campaignId));
    // The provider had not created the payment yet: the edge did not wait for it.
    expect(stack.simulator.chargeCount(`${id}:create`)).toBe(0);
    expect(first.status).toBe(202);
    expect(first.headers.get('location')).toBe(`/v1/donations/${id}`);
    expect(Number(first.headers.get('retry-after'))).toBeGreaterThan(0);
    const pending = (await first.json()) as Accepted;
    expect(pending).toMatchObject({ id, status: 'PENDING', paymentAction: null });

    // The key's answer is the PENDING one: a retry replays it, Retry-After included.
    const replay = await postDonation(stack.apiUrl, key, donationBody(campaignId));
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.headers.get('retry-after')).toBe(first.headers.get('retry-after'));
    expect(await replay.json()).toEqual(pending);

    // Read at once (recorded or not yet), then long-polled until the action exists.
    expect(await read(id)).toMatchObject({ id, status: 'PENDING', paymentAction: null });
    const shown = await read(id, '?wait=30');
    expect(shown.paymentAction).toEqual({
      type: 'qr',
      value: expect.stringContaining(id) as string,
    });

    await waitForStatus(stack, id, 'CONFIRMED');
    const effects = await effectsOf(stack, id);
    expect(effects).toMatchObject({ donations: 1, workflows: 1, charges: 1 });
    expect(effects.ledger).toHaveLength(1);
    expect(await earlyReturns('budget')).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it('refuses a wait longer than 30 seconds', async () => {
    const response = await fetch(
      `${stack.apiUrl}/v1/donations/${deriveUuid(clientAScope('x'))}?wait=31`,
      {
        headers: { authorization: `Bearer ${CLIENT_SECRET}` },
      },
    );
    expect(response.status).toBe(400);
  });
});

describe('admission control', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({
      autoPayMs: 200,
      env: { EARLY_RETURN_MS: '60000', EARLY_RETURN_MAX_IN_FLIGHT: '1' },
    });
  });
  afterAll(async () => {
    await stack.stop();
  });

  it('past the bound of waits, starts the donation and answers PENDING at once', async () => {
    const campaignId = await createCampaign(stack.db);
    const slowKey = `held-${Date.now()}`;
    const slowId = deriveUuid(clientAScope(slowKey));
    stack.simulator.plan(slowId, { latencyMs: SLOW_PROVIDER_MS });

    // The one wait this process allows: held by a donation whose provider is slow.
    let slowAnswered = false;
    const slow = postDonation(stack.apiUrl, slowKey, donationBody(campaignId)).then(
      async (response) => {
        slowAnswered = true;
        return { status: response.status, body: (await response.json()) as Accepted };
      },
    );
    await eventually(() =>
      stack.temporal.workflow
        .getHandle(donationWorkflowId(slowId))
        .describe()
        .then(() => true)
        .catch(() => undefined),
    );

    const key = `admitted-${Date.now()}`;
    const id = deriveUuid(clientAScope(key));
    const quick = await postDonation(stack.apiUrl, key, donationBody(campaignId));
    expect(slowAnswered).toBe(false);
    expect(quick.status).toBe(202);
    expect(await quick.json()).toMatchObject({ id, status: 'PENDING', paymentAction: null });
    const metrics = await stack.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toContain('galang_donation_early_returns_total{outcome="admission"} 1');

    // Started without waiting, it runs to the end like any other donation.
    const shown = await fetch(`${stack.apiUrl}/v1/donations/${id}?wait=30`, {
      headers: { authorization: `Bearer ${CLIENT_SECRET}` },
    });
    expect(((await shown.json()) as Accepted).paymentAction).not.toBeNull();
    const held = await slow;
    expect(held.status).toBe(202);
    expect(held.body.paymentAction).not.toBeNull();
    for (const donationId of [id, slowId]) {
      await waitForStatus(stack, donationId, 'CONFIRMED');
      expect(await effectsOf(stack, donationId)).toMatchObject({ donations: 1, charges: 1 });
    }
  }, 60_000);
});

describe('the start of a donation (issue 12, the edge)', () => {
  let stack: Stack;
  let otherEdge: { app: FastifyInstance; store: IdempotencyStore; dir: string };

  beforeAll(async () => {
    stack = await startStack({ autoPayMs: 200, env: { EARLY_RETURN_MS: '30000' } });
    // A second edge on the same Temporal and Postgres with an LMDB of its own (another node).
    const dir = mkdtempSync(path.join(os.tmpdir(), 'galang-other-edge-'));
    const store = new IdempotencyStore({ path: dir, ttlSeconds: 86_400 });
    const simulator = createSimulatorProvider({
      baseUrl: stack.simulatorUrl,
      webhookSecrets: [stack.config.simulator.webhookSecret],
    });
    const app = await buildApp({
      config: stack.config,
      db: stack.db,
      redis: stack.redis,
      idempotencyStore: store,
      temporal: stack.temporal,
      providers: new Map([['simulator', simulator]]),
      defaultProvider: 'simulator',
      metrics: createMetrics(),
      logger: false,
    });
    otherEdge = { app, store, dir };
  });
  afterAll(async () => {
    await otherEdge.app.close();
    await otherEdge.store.close();
    removeStoreFiles(otherEdge.dir);
    await stack.stop();
  });

  it('attaches every request waiting for one donation to one update', async () => {
    const campaignId = await createCampaign(stack.db);
    const key = `one-update-${Date.now()}`;
    const id = deriveUuid(clientAScope(key));
    stack.simulator.plan(id, { latencyMs: 2_000 });
    const payload = JSON.stringify(donationBody(campaignId));
    const headers = {
      authorization: `Bearer ${CLIENT_SECRET}`,
      'idempotency-key': key,
      'content-type': 'application/json',
    };

    // Two edges miss each other (their keys live in different LMDBs) and both wait.
    const [viaStack, viaOther] = await Promise.all([
      stack.app.inject({ method: 'POST', url: '/v1/donations', headers, payload }),
      otherEdge.app.inject({ method: 'POST', url: '/v1/donations', headers, payload }),
    ]);
    expect(viaStack.statusCode).toBe(202);
    expect(viaOther.json()).toEqual(viaStack.json());

    const handle = stack.temporal.workflow.getHandle(donationWorkflowId(id));
    const history = await handle.fetchHistory();
    const accepted = (history.events ?? []).filter(
      (event) => event.workflowExecutionUpdateAcceptedEventAttributes,
    );
    expect(accepted).toHaveLength(1);
    expect(
      accepted[0]?.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.meta?.updateId,
    ).toBe(paymentActionUpdateId(id));
  }, 60_000);

  it('starts a donation again when its earlier run failed', async () => {
    const campaignId = await createCampaign(stack.db);
    const key = `failed-run-${Date.now()}`;
    const id = deriveUuid(clientAScope(key));
    // A run that never got anywhere (no worker polls its queue), then terminated: what an
    // operator's terminate or a run timing out leaves behind. Its client never got an answer.
    const dead = await stack.temporal.workflow.start(WorkflowType.donation, {
      workflowId: donationWorkflowId(id),
      taskQueue: `nobody-polls-${Date.now()}`,
      args: [{}],
    });
    await dead.terminate('test: a failed run');

    const retry = await postDonation(stack.apiUrl, key, donationBody(campaignId));
    expect(retry.status).toBe(202);
    expect(((await retry.json()) as Accepted).paymentAction).not.toBeNull();
    await waitForStatus(stack, id, 'CONFIRMED');
    expect(await effectsOf(stack, id)).toMatchObject({ donations: 1, workflows: 2, charges: 1 });
  }, 60_000);
});

describe('a donation accepted before any worker recorded it', () => {
  let stack: Stack;

  beforeAll(async () => {
    // No worker: the workflow starts, nobody runs it, the row never exists.
    stack = await startStack({ noWorker: true, env: { EARLY_RETURN_MS: '300' } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  it('reads as PENDING from its started workflow, through the payload codec', async () => {
    const campaignId = await createCampaign(stack.db);
    const key = `unrecorded-${Date.now()}`;
    const id = deriveUuid(clientAScope(key));
    const accepted = await postDonation(stack.apiUrl, key, donationBody(campaignId, 12_000));
    expect(accepted.status).toBe(202);
    const response = await fetch(`${stack.apiUrl}/v1/donations/${id}`, {
      headers: { authorization: `Bearer ${CLIENT_SECRET}` },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      id,
      status: 'PENDING',
      amount: 12_000,
      paymentAction: null,
      workflowId: donationWorkflowId(id),
    });
    await stack.temporal.workflow.getHandle(donationWorkflowId(id)).terminate('test done');
  });
});

describe('the early return past its budget, once the workflow recorded the donation', () => {
  it('answers PENDING from that record without starting the workflow again', async () => {
    // The edge reaches Temporal through a proxy this test cuts; the worker reaches it directly.
    const proxy = await TcpProxy.start(testState().temporalAddress);
    const stack = await startStack({
      autoPayMs: 200,
      apiTemporalAddress: proxy.address,
      env: { EARLY_RETURN_MS: '4000', TEMPORAL_REQUEST_TIMEOUT_MS: '1500' },
    });
    try {
      const campaignId = await createCampaign(stack.db);
      const key = `recorded-${Date.now()}`;
      const id = deriveUuid(clientAScope(key));
      // The provider refuses every create for now: the donation is recorded, its action never
      // comes while the edge waits, whatever the machine's speed.
      stack.simulator.plan(id, { errorRate: 1 });
      const answered = postDonation(stack.apiUrl, key, donationBody(campaignId));
      // Its workflow's first step recorded it. From here the edge cannot reach Temporal: a
      // second start would fail, and with no payment action to answer the edge would say 503.
      await eventually(() =>
        stack.db.selectFrom('donations').select('id').where('id', '=', id).executeTakeFirst(),
      );
      proxy.set('refuse');
      const response = await answered;
      expect(response.status).toBe(202);
      expect(((await response.json()) as Accepted).paymentAction).toBeNull();

      stack.simulator.plan(id, {});
      proxy.set('pass');
      // The edge's connection comes back after gRPC's reconnect backoff, the payment after the
      // workflow's next try: slow on a loaded machine, so the wait is long.
      await waitForStatus(stack, id, 'CONFIRMED', 90_000);
      expect(await effectsOf(stack, id)).toMatchObject({ donations: 1, workflows: 1, charges: 1 });
    } finally {
      proxy.set('pass');
      await stack.stop();
      await proxy.close();
    }
  }, 150_000);
});
