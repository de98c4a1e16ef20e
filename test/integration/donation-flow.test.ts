import type { LogEntry } from '@temporalio/worker';
import { progressCacheKey } from '../../src/campaigns/progress-cache';
import { effectsOf, postDonation, waitForStatus } from '../support/donations';
import {
  CLIENT_SECRET,
  createCampaign,
  donationBody,
  eventually,
  startStack,
} from '../support/stack';
import type { Stack } from '../support/stack';

/**
 * The walking skeleton end to end over real HTTP: Fastify + LMDB at the edge, a Temporal
 * workflow, the simulator's signed webhook, Postgres ledger and totals, Redis cache.
 */
describe('a donation, end to end', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ autoPayMs: -1 });
  });
  afterAll(async () => {
    await stack.stop();
  });

  const post = (key: string, body: unknown) => postDonation(stack.apiUrl, key, body);

  it('is taken once, charged once, credited once, and refreshes the cached progress', async () => {
    const campaignId = await createCampaign(stack.db);
    const key = `e2e-${Date.now()}`;

    const first = await post(key, donationBody(campaignId));
    expect(first.status).toBe(202);
    const accepted = (await first.json()) as {
      id: string;
      status: string;
      paymentAction: { type: string; value: string };
    };
    expect(first.headers.get('location')).toBe(`/v1/donations/${accepted.id}`);
    // Early return: the provider has created the payment; the donor gets what to pay with.
    expect(accepted.status).toBe('AWAITING_PAYMENT');
    expect(accepted.paymentAction).toEqual({
      type: 'qr',
      value: expect.stringContaining(accepted.id) as string,
    });

    const second = await post(key, donationBody(campaignId));
    expect(second.status).toBe(202);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await second.json()).toEqual(accepted);

    // The provider has the payment; the donor has not paid yet.
    const awaiting = await eventually(async () => {
      const row = await stack.db
        .selectFrom('donations')
        .selectAll()
        .where('id', '=', accepted.id)
        .executeTakeFirst();
      return row?.status === 'AWAITING_PAYMENT' ? row : undefined;
    });
    expect(stack.simulator.chargeCount(`${accepted.id}:create`)).toBe(1);

    // A campaign page reads progress: the cache now holds it.
    const before = await fetch(`${stack.apiUrl}/v1/campaigns/${campaignId}/progress`);
    expect(await before.json()).toMatchObject({ confirmedAmount: 0, donationCount: 0 });
    expect(await stack.redis.exists(progressCacheKey(campaignId))).toBe(1);

    // The donor pays; the simulator sends its signed webhook twice, as gateways do.
    const paymentId = awaiting.provider_reference ?? '';
    stack.simulator.transition(paymentId, 'settled');
    stack.simulator.transition(paymentId, 'settled');

    const confirmed = await eventually(async () => {
      const response = await fetch(`${stack.apiUrl}/v1/donations/${accepted.id}`, {
        headers: { authorization: `Bearer ${CLIENT_SECRET}` },
      });
      const body = (await response.json()) as { status: string };
      return body.status === 'CONFIRMED' ? body : undefined;
    });
    expect(confirmed).toMatchObject({ amount: 50_000, currency: 'IDR', campaignId });

    const ledger = await stack.db
      .selectFrom('donation_ledger')
      .selectAll()
      .where('donation_id', '=', accepted.id)
      .execute();
    expect(ledger).toHaveLength(1);
    expect(ledger[0]).toMatchObject({ entry_type: 'DONATION', amount: 50_000, currency: 'IDR' });

    const totals = await stack.db
      .selectFrom('campaign_totals')
      .selectAll()
      .where('campaign_id', '=', campaignId)
      .executeTakeFirstOrThrow();
    expect(totals).toMatchObject({ confirmed_amount: 50_000, donation_count: 1 });

    // The worker put the new totals into the cache after the ledger commit.
    await eventually(async () => {
      const cached = JSON.parse((await stack.redis.get(progressCacheKey(campaignId))) ?? '{}') as {
        confirmedAmount?: number;
      };
      return cached.confirmedAmount === 50_000 ? true : undefined;
    });
    // The API's own copy is dropped by the worker's invalidation message (or its short TTL).
    const after = await eventually(async () => {
      const response = await fetch(`${stack.apiUrl}/v1/campaigns/${campaignId}/progress`);
      const body = (await response.json()) as { confirmedAmount: number };
      return body.confirmedAmount === 50_000 ? body : undefined;
    });
    expect(after).toMatchObject({ confirmedAmount: 50_000, donationCount: 1, stale: false });

    // A late retry of the same request changes nothing and starts nothing.
    const third = await post(key, donationBody(campaignId));
    expect(third.headers.get('idempotent-replayed')).toBe('true');
    const executions = [];
    for await (const execution of stack.temporal.workflow.list({
      query: `WorkflowId = 'donation-${accepted.id}'`,
    })) {
      executions.push(execution);
    }
    expect(executions).toHaveLength(1);
    expect(
      await stack.db
        .selectFrom('donations')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('campaign_id', '=', campaignId)
        .executeTakeFirstOrThrow(),
    ).toEqual({ n: 1 });
    expect(stack.simulator.chargeCount(`${accepted.id}:create`)).toBe(1);
  });

  it("keeps a donation's history to its shape: 16 events, one status upsert at the ending", async () => {
    const campaignId = await createCampaign(stack.db);
    const first = await post(`shape-${Date.now()}`, donationBody(campaignId));
    const { id } = (await first.json()) as { id: string };
    await waitForStatus(stack, id, 'AWAITING_PAYMENT');
    const row = await stack.db
      .selectFrom('donations')
      .select('provider_reference')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    stack.simulator.transition(row.provider_reference ?? '', 'settled');
    const handle = stack.temporal.workflow.getHandle(`donation-${id}`);
    await handle.result();
    const events = (await handle.fetchHistory()).events ?? [];
    expect(events.length).toBeLessThanOrEqual(16);
    const upserts = events.flatMap((e, i) =>
      e.upsertWorkflowSearchAttributesEventAttributes ? [i] : [],
    );
    // Open donations are found by execution status: no visibility write until the ending.
    expect(upserts).toEqual([events.length - 2]);
  });

  it("carries the request's X-Request-Id into the workflow and the activities' logs", async () => {
    const campaignId = await createCampaign(stack.db);
    const requestId = `req-${Date.now()}`;
    const response = await postDonation(
      stack.apiUrl,
      `corr-${Date.now()}`,
      donationBody(campaignId),
      { 'x-request-id': requestId },
    );
    expect(response.headers.get('x-request-id')).toBe(requestId);
    const { id } = (await response.json()) as { id: string };
    const description = await stack.temporal.workflow.getHandle(`donation-${id}`).describe();
    expect(description.memo).toMatchObject({ correlationId: requestId });

    const logs = (globalThis as { galangTemporalLogs?: LogEntry[] }).galangTemporalLogs ?? [];
    const recorded = await eventually(async () =>
      logs.find((e) => e.message === 'donation recorded' && e.meta?.donationId === id),
    );
    expect(recorded.meta).toMatchObject({
      correlationId: requestId,
      activityType: 'startPayment',
    });
  });

  it('answers a different body under the same key with 422 and starts nothing', async () => {
    const campaignId = await createCampaign(stack.db);
    const key = `mismatch-${Date.now()}`;
    const first = await post(key, donationBody(campaignId, 10_000));
    expect(first.status).toBe(202);
    const { id } = (await first.json()) as { id: string };
    const since = new Date().toISOString();
    const second = await post(key, donationBody(campaignId, 20_000));
    // Nothing started on this stack's task queue after the first answer, under any ID; the
    // one execution of the key is the first request's, for its amount.
    const startedSince = [];
    for await (const execution of stack.temporal.workflow.list({
      query: `TaskQueue = '${stack.config.temporal.taskQueue}' AND StartTime > '${since}'`,
    })) {
      startedSince.push(execution.workflowId);
    }
    expect(startedSince).toEqual([]);
    expect((await effectsOf(stack, id)).workflows).toBe(1);
    await waitForStatus(stack, id, 'AWAITING_PAYMENT');
    expect(
      await stack.db
        .selectFrom('donations')
        .select('amount')
        .where('campaign_id', '=', campaignId)
        .execute(),
    ).toEqual([{ amount: 10_000 }]);
    expect(second.status).toBe(422);
    expect(second.headers.get('content-type')).toContain('application/problem+json');
    expect(await second.json()).toMatchObject({ type: '/problems/idempotency-key-mismatch' });
  });

  it('refuses a closed campaign with a cached 422 campaign-closed', async () => {
    const campaignId = await createCampaign(stack.db, { endsAt: new Date(Date.now() - 1000) });
    const key = `closed-${Date.now()}`;
    const first = await post(key, donationBody(campaignId));
    expect(first.status).toBe(422);
    expect(await first.json()).toMatchObject({ code: 'campaign-closed' });
    const again = await post(key, donationBody(campaignId));
    expect(again.status).toBe(422);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });
});
