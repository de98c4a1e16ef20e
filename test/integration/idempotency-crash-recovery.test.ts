import { WorkflowNotFoundError } from '@temporalio/client';
import { deriveUuid, scopedKey } from '../../src/idempotency/idempotency-key';
import { donationWorkflowId } from '../../workflows/contracts';
import { spawnApi } from '../support/api-process';
import type { ApiProcess } from '../support/api-process';
import {
  clientAScope,
  effectsOf,
  postDonation,
  postDonationUntilAccepted,
  waitForStatus,
} from '../support/donations';
import { TcpProxy } from '../support/tcp-proxy';
import type { ProxyMode } from '../support/tcp-proxy';
import { createCampaign, donationBody, eventually, startStack } from '../support/stack';
import type { Stack } from '../support/stack';

/**
 * The edge across processes and crashes: API processes are the real entry point, sharing one
 * LMDB environment with each other and with this test; Temporal, Postgres and Redis are real.
 */
describe('idempotency across processes and crashes', () => {
  let stack: Stack;
  let proxy: Awaited<ReturnType<typeof TcpProxy.start>>;
  const apis: ApiProcess[] = [];

  beforeAll(async () => {
    stack = await startStack({ autoPayMs: 100 });
    proxy = await TcpProxy.start(stack.config.temporal.address);
  });
  afterEach(async () => {
    proxy.set('pass');
    await Promise.all(apis.splice(0).map((api) => api.stop()));
  });
  afterAll(async () => {
    await proxy.close();
    await stack.stop();
  });

  const spawn = async (overrides: Record<string, string> = {}) => {
    const api = await spawnApi(stack.config, overrides);
    apis.push(api);
    return api;
  };

  /**
   * An API process whose Temporal connection the test breaks under it (`mode`) after warming
   * it up, then a request with `key` that hangs until `hung` says the moment has come, then
   * SIGKILL.
   */
  async function crashMidRequest(
    mode: ProxyMode,
    leaseSeconds: number,
    hung: (key: string, donationId: string) => Promise<unknown>,
  ) {
    const doomed = await spawn({
      TEMPORAL_ADDRESS: proxy.address,
      TEMPORAL_REQUEST_TIMEOUT_MS: '60000',
      IDEMPOTENCY_LEASE_SECONDS: String(leaseSeconds),
    });
    const campaignId = await createCampaign(stack.db);
    const warm = await postDonation(doomed.url, `warm-${Date.now()}`, donationBody(campaignId));
    expect(warm.status).toBe(202);
    proxy.set(mode);
    const key = `crash-${mode}-${Date.now()}`;
    const donationId = deriveUuid(clientAScope(key));
    void postDonation(doomed.url, key, donationBody(campaignId)).catch(() => undefined);
    await eventually(() => hung(key, donationId));
    await doomed.kill9();
    return { key, donationId, campaignId };
  }

  /**
   * A new API process takes the retry through the dead one's claim: the same donation id comes
   * back, and every effect exists exactly once.
   */
  async function recoverOnce(key: string, campaignId: string, donationId: string) {
    const survivor = await spawn();
    const recovered = await postDonationUntilAccepted(survivor.url, key, donationBody(campaignId));
    expect(recovered.status).toBe(202);
    expect(((await recovered.json()) as { id: string }).id).toBe(donationId);
    await waitForStatus(stack, donationId, 'CONFIRMED');
    const effects = await effectsOf(stack, donationId);
    expect(effects).toMatchObject({ donations: 1, workflows: 1, charges: 1 });
    expect(effects.ledger).toHaveLength(1);
    return survivor;
  }

  it('takes 200 concurrent requests with one key across two processes exactly once', async () => {
    const first = await spawn();
    const second = await spawn();
    const campaignId = await createCampaign(stack.db);
    const key = `burst-${Date.now()}`;
    const body = donationBody(campaignId);

    const responses = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const response = await postDonation((i % 2 === 0 ? first : second).url, key, body);
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

    const donationId = deriveUuid(clientAScope(key));
    await waitForStatus(stack, donationId, 'CONFIRMED');
    expect(await effectsOf(stack, donationId)).toMatchObject({
      donations: 1,
      ledger: [{ entry_type: 'DONATION', amount: 50_000 }],
      workflows: 1,
      charges: 1,
    });
  });

  it('recovers a claim whose process was killed between claim and workflow start', async () => {
    // Nothing reaches Temporal: the claim is made, the workflow never starts.
    const { key, donationId, campaignId } = await crashMidRequest('blackhole', 5, async (k) =>
      stack.store.get(scopedKey(clientAScope(k))),
    );
    await expect(
      stack.temporal.workflow.getHandle(donationWorkflowId(donationId)).describe(),
    ).rejects.toBeInstanceOf(WorkflowNotFoundError);

    // Within the dead process's lease, a retry is told to wait, not let through.
    const immediate = await postDonation(stack.apiUrl, key, donationBody(campaignId));
    expect(immediate.status).toBe(409);
    const survivor = await recoverOnce(key, campaignId, donationId);
    const replay = await postDonation(survivor.url, key, donationBody(campaignId));
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
  });

  it('re-attaches to the workflow when the process died between start and completion', async () => {
    // Requests reach Temporal; its answers never come back.
    const { key, donationId, campaignId } = await crashMidRequest(
      'drop-downstream',
      2,
      async (_, id) =>
        stack.temporal.workflow
          .getHandle(donationWorkflowId(id))
          .describe()
          .catch(() => undefined),
    );
    expect(stack.store.get(scopedKey(clientAScope(key)))?.status).toBe('IN_FLIGHT');

    await recoverOnce(key, campaignId, donationId);
  });
});
