import { WorkflowNotFoundError } from '@temporalio/client';
import { deriveUuid, scopedKey } from '../../src/idempotency/idempotency-key';
import { donationWorkflowId } from '../../src/donations/donation-service';
import { spawnApi } from '../support/api-process';
import type { ApiProcess } from '../support/api-process';
import { TcpProxy } from '../support/tcp-proxy';
import {
  CLIENT_SECRET,
  createCampaign,
  donationBody,
  eventually,
  startStack,
} from '../support/stack';
import type { Stack } from '../support/stack';

/**
 * The edge across processes and crashes: API processes are the real entry point, sharing one
 * LMDB environment with each other and with this test; Temporal, Postgres and Redis are real.
 */
describe('idempotency across processes and crashes', () => {
  let stack: Stack;
  const apis: ApiProcess[] = [];

  beforeAll(async () => {
    stack = await startStack({ autoPayMs: 100 });
  });
  afterEach(async () => {
    await Promise.all(apis.splice(0).map((api) => api.stop()));
  });
  afterAll(async () => {
    await stack.stop();
  });

  const post = (url: string, key: string, body: unknown) =>
    fetch(`${url}/v1/donations`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${CLIENT_SECRET}`,
        'idempotency-key': key,
        'content-type': 'application/json',
      },
      body: JSON.stringify(body),
    });

  const scope = (key: string) => ({
    clientId: 'client-a',
    method: 'POST',
    route: '/v1/donations',
    key,
  });

  async function effectsOf(donationId: string) {
    const count = async (table: 'donations' | 'donation_ledger', column: 'id' | 'donation_id') =>
      (
        await stack.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where(column, '=', donationId)
          .executeTakeFirstOrThrow()
      ).n;
    const executions = [];
    for await (const e of stack.temporal.workflow.list({
      query: `WorkflowId = '${donationWorkflowId(donationId)}'`,
    })) {
      executions.push(e);
    }
    return {
      donations: await count('donations', 'id'),
      ledger: await count('donation_ledger', 'donation_id'),
      workflows: executions.length,
      charges: stack.simulator.chargeCount(`${donationId}:create`),
    };
  }

  async function confirmed(donationId: string) {
    await eventually(async () => {
      const row = await stack.db
        .selectFrom('donations')
        .select('status')
        .where('id', '=', donationId)
        .executeTakeFirst();
      return row?.status === 'CONFIRMED' ? true : undefined;
    }, 30_000);
  }

  /** Retries like a well-behaved client: same key and body, honouring Retry-After on 409. */
  async function retryUntilAccepted(url: string, key: string, body: unknown) {
    for (let attempt = 0; attempt < 40; attempt++) {
      const response = await post(url, key, body);
      if (response.status !== 409 && response.status !== 503) return response;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error('never accepted');
  }

  it('takes 200 concurrent requests with one key across two processes exactly once', async () => {
    const first = await spawnApi(stack.config);
    const second = await spawnApi(stack.config);
    apis.push(first, second);
    const campaignId = await createCampaign(stack.db);
    const key = `burst-${Date.now()}`;
    const body = donationBody(campaignId);

    const responses = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const response = await post((i % 2 === 0 ? first : second).url, key, body);
        return {
          status: response.status,
          replayed: response.headers.get('idempotent-replayed') === 'true',
          retryAfter: response.headers.get('retry-after'),
          body: await response.text(),
        };
      }),
    );
    const originals = responses.filter((r) => r.status === 202 && !r.replayed);
    const replays = responses.filter((r) => r.status === 202 && r.replayed);
    const conflicts = responses.filter((r) => r.status === 409);
    const [original, ...others] = originals;
    expect(others).toHaveLength(0);
    expect(originals.length + replays.length + conflicts.length).toBe(200);
    for (const replay of replays) expect(replay.body).toBe(original?.body);
    for (const conflict of conflicts) expect(Number(conflict.retryAfter)).toBeGreaterThan(0);

    const donationId = deriveUuid(scope(key));
    await confirmed(donationId);
    expect(await effectsOf(donationId)).toEqual({
      donations: 1,
      ledger: 1,
      workflows: 1,
      charges: 1,
    });
  });

  it('recovers a claim whose process was killed between claim and workflow start', async () => {
    const proxy = await TcpProxy.start(stack.config.temporal.address);
    try {
      const doomed = await spawnApi(stack.config, {
        TEMPORAL_ADDRESS: proxy.address,
        TEMPORAL_REQUEST_TIMEOUT_MS: '60000',
        IDEMPOTENCY_LEASE_SECONDS: '5',
      });
      apis.push(doomed);
      const campaignId = await createCampaign(stack.db);
      // Open the process's Temporal connection, then hang the network under it.
      expect((await post(doomed.url, `warm-${Date.now()}`, donationBody(campaignId))).status).toBe(
        202,
      );
      proxy.set('blackhole');

      const key = `crash-before-start-${Date.now()}`;
      const donationId = deriveUuid(scope(key));
      void post(doomed.url, key, donationBody(campaignId)).catch(() => undefined);
      await eventually(async () => stack.store.get(scopedKey(scope(key))));
      await doomed.kill9();
      await expect(
        stack.temporal.workflow.getHandle(donationWorkflowId(donationId)).describe(),
      ).rejects.toBeInstanceOf(WorkflowNotFoundError);

      // Within the dead process's lease, a retry is told to wait, not let through.
      const immediate = await post(stack.apiUrl, key, donationBody(campaignId));
      expect(immediate.status).toBe(409);
      const survivor = await spawnApi(stack.config);
      apis.push(survivor);
      const recovered = await retryUntilAccepted(survivor.url, key, donationBody(campaignId));
      expect(recovered.status).toBe(202);
      expect(((await recovered.json()) as { id: string }).id).toBe(donationId);

      await confirmed(donationId);
      expect(await effectsOf(donationId)).toEqual({
        donations: 1,
        ledger: 1,
        workflows: 1,
        charges: 1,
      });
      const replay = await post(survivor.url, key, donationBody(campaignId));
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
    } finally {
      await proxy.close();
    }
  });

  it('re-attaches to the workflow when the process died between start and completion', async () => {
    const proxy = await TcpProxy.start(stack.config.temporal.address);
    try {
      const doomed = await spawnApi(stack.config, {
        TEMPORAL_ADDRESS: proxy.address,
        TEMPORAL_REQUEST_TIMEOUT_MS: '60000',
        IDEMPOTENCY_LEASE_SECONDS: '2',
      });
      apis.push(doomed);
      const campaignId = await createCampaign(stack.db);
      expect((await post(doomed.url, `warm-${Date.now()}`, donationBody(campaignId))).status).toBe(
        202,
      );
      // Requests reach Temporal; its answers never come back.
      proxy.set('drop-downstream');

      const key = `crash-after-start-${Date.now()}`;
      const donationId = deriveUuid(scope(key));
      void post(doomed.url, key, donationBody(campaignId)).catch(() => undefined);
      await eventually(async () => {
        try {
          return await stack.temporal.workflow.getHandle(donationWorkflowId(donationId)).describe();
        } catch {
          return undefined;
        }
      });
      expect(stack.store.get(scopedKey(scope(key)))?.status).toBe('IN_FLIGHT');
      await doomed.kill9();

      const survivor = await spawnApi(stack.config, { IDEMPOTENCY_LEASE_SECONDS: '2' });
      apis.push(survivor);
      const recovered = await retryUntilAccepted(survivor.url, key, donationBody(campaignId));
      expect(recovered.status).toBe(202);
      expect(((await recovered.json()) as { id: string }).id).toBe(donationId);

      await confirmed(donationId);
      expect(await effectsOf(donationId)).toEqual({
        donations: 1,
        ledger: 1,
        workflows: 1,
        charges: 1,
      });
    } finally {
      await proxy.close();
    }
  });
});
