import { deriveUuid } from '../../src/idempotency/idempotency-key';
import { clientAScope, effectsOf, postDonation, waitForStatus } from '../support/donations';
import { createCampaign, donationBody, eventually, startStack } from '../support/stack';
import type { Stack } from '../support/stack';

/**
 * A worker asked to stop waits for its tasks, and Temporal's core waits for a local activity
 * through every retry it backs off from in the worker: a provider outage held a stopping worker
 * (a deploy, Ctrl-C) for as long as the outage lasted. Backoffs past two seconds now wait on a
 * workflow timer, so the worker stops, and the next worker creates the payment once.
 */
describe('a worker stopping during a provider outage', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({
      autoPayMs: 200,
      env: { EARLY_RETURN_MS: '500' },
    });
  });
  afterAll(() => stack.stop());

  test('stops while the create is retried; the next worker creates the payment once', async () => {
    const campaignId = await createCampaign(stack.db);
    const key = `shutdown-${Date.now()}`;
    const id = deriveUuid(clientAScope(key));
    // Every create is refused: the workflow's first local activity retries, and keeps retrying.
    stack.simulator.plan(id, { errorRate: 1 });
    const answered = await postDonation(stack.apiUrl, key, donationBody(campaignId));
    expect(answered.status).toBe(202);
    await eventually(() =>
      stack.db.selectFrom('donations').select('id').where('id', '=', id).executeTakeFirst(),
    );

    // Without the bound this never returns: the retries outlive any wait.
    await stack.restartWorker();

    stack.simulator.plan(id, {});
    await waitForStatus(stack, id, 'CONFIRMED', 90_000);
    expect(await effectsOf(stack, id)).toMatchObject({ donations: 1, workflows: 1, charges: 1 });
  }, 150_000);
});
