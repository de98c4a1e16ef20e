import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import { deriveUuid } from '../../src/idempotency/idempotency-key';
import { donationWorkflowId } from '../../workflows/contracts';
import { clientAScope, postDonation, waitForStatus } from '../support/donations';
import {
  CLIENT_SECRET,
  OPERATOR_SECRET,
  createCampaign,
  donationBody,
  startStack,
} from '../support/stack';
import type { Stack } from '../support/stack';

describe('operator campaign endpoints', () => {
  let stack: Stack;

  beforeAll(async () => {
    // A worker runs, so a donation that slipped through would get its row and its workflow.
    stack = await startStack({ autoPayMs: -1 });
  });
  afterAll(async () => {
    await stack.stop();
  });

  const operator = (method: string, path: string, body?: unknown, key?: string) =>
    fetch(`${stack.apiUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${OPERATOR_SECRET}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(key === undefined ? {} : { 'idempotency-key': key }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  it('creates a campaign once per key and refuses the same id with other details', async () => {
    const id = `op-${randomUUID().slice(0, 8)}`;
    const body = { id, title: 'Banjir Demak', goalAmount: 500_000_000, currency: 'IDR' };
    const key = randomUUID();

    const created = await operator('POST', '/v1/campaigns', body, key);
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`/v1/campaigns/${id}`);
    const campaign = (await created.json()) as Record<string, unknown>;
    expect(campaign).toMatchObject({
      id,
      title: 'Banjir Demak',
      goalAmount: 500_000_000,
      currency: 'IDR',
      status: 'OPEN',
      endsAt: null,
      acceptingDonations: true,
      confirmedAmount: 0,
      donationCount: 0,
    });

    const replay = await operator('POST', '/v1/campaigns', body, key);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await replay.json()).toEqual(campaign);

    // A retry under a new key (the first answer was lost) finds the same campaign.
    const again = await operator('POST', '/v1/campaigns', body, randomUUID());
    expect(again.status).toBe(200);

    const conflict = await operator(
      'POST',
      '/v1/campaigns',
      { ...body, goalAmount: 1 },
      randomUUID(),
    );
    expect(conflict.status).toBe(409);
    expect(((await conflict.json()) as { type: string }).type).toMatch(/campaign-exists$/);

    const generated = await operator(
      'POST',
      '/v1/campaigns',
      { title: 'Tanpa slug', goalAmount: 1_000, currency: 'USD' },
      randomUUID(),
    );
    expect(generated.status).toBe(201);
    expect(((await generated.json()) as { id: string }).id).toMatch(/^cmp_[0-9a-f]{20}$/);

    const rows = await stack.db
      .selectFrom('campaign_totals')
      .selectAll()
      .where('campaign_id', '=', id)
      .execute();
    expect(rows).toHaveLength(1);
  });

  it('refuses bad campaigns with problem details and nothing written', async () => {
    const id = `bad-${randomUUID().slice(0, 8)}`;
    const cases: [unknown, number, string][] = [
      [{ id, title: 'x', goalAmount: 0, currency: 'IDR' }, 400, 'validation-failed'],
      [{ id, title: 'x', goalAmount: 10, currency: 'XXX' }, 422, 'unsupported-currency'],
      [{ id, title: 'x', goalAmount: 10, currency: 'IDR', extra: 1 }, 400, 'validation-failed'],
      [
        { id, title: 'x', goalAmount: 10, currency: 'IDR', endsAt: '2001-01-01T00:00:00Z' },
        400,
        'validation-failed',
      ],
      [{ id: 'no spaces', title: 'x', goalAmount: 10, currency: 'IDR' }, 400, 'validation-failed'],
    ];
    for (const [body, status, type] of cases) {
      const response = await operator('POST', '/v1/campaigns', body, randomUUID());
      expect(response.status).toBe(status);
      expect(response.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(((await response.json()) as { type: string }).type).toMatch(new RegExp(`${type}$`));
    }
    const missingKey = await operator('POST', '/v1/campaigns', {
      id,
      title: 'x',
      goalAmount: 10,
      currency: 'IDR',
    });
    expect(missingKey.status).toBe(400);
    const written = await stack.db
      .selectFrom('campaigns')
      .select('id')
      .where('id', '=', id)
      .execute();
    expect(written).toHaveLength(0);
  });

  it('is for operators only', async () => {
    const campaignId = await createCampaign(stack.db);
    const asClient = await fetch(`${stack.apiUrl}/v1/campaigns/${campaignId}`, {
      headers: { authorization: `Bearer ${CLIENT_SECRET}` },
    });
    expect(asClient.status).toBe(403);
    const anonymous = await fetch(`${stack.apiUrl}/v1/campaigns/${campaignId}/close`, {
      method: 'POST',
    });
    expect(anonymous.status).toBe(401);
    expect((await operator('GET', `/v1/campaigns/${campaignId}`)).status).toBe(200);
    expect((await operator('GET', '/v1/campaigns/nope-404')).status).toBe(404);
  });

  it('closes a campaign: new donations get 422 campaign-closed, closing again is harmless', async () => {
    const campaignId = await createCampaign(stack.db);
    const closed = await operator('POST', `/v1/campaigns/${campaignId}/close`);
    expect(closed.status).toBe(200);
    expect(await closed.json()).toMatchObject({ status: 'CLOSED', acceptingDonations: false });

    const refusedKey = randomUUID();
    const refused = await postDonation(stack.apiUrl, refusedKey, donationBody(campaignId));
    expect(refused.status).toBe(422);
    expect(((await refused.json()) as { type: string }).type).toMatch(/campaign-closed$/);

    // A donation to an open campaign, posted after, is recorded by the running worker: once it
    // is, the refused one has had every chance to be recorded too.
    const open = await createCampaign(stack.db);
    const accepted = await postDonation(stack.apiUrl, randomUUID(), donationBody(open));
    expect(accepted.status).toBe(202);
    await waitForStatus(stack, ((await accepted.json()) as { id: string }).id, 'AWAITING_PAYMENT');

    const donations = await stack.db
      .selectFrom('donations')
      .select('id')
      .where('campaign_id', '=', campaignId)
      .execute();
    expect(donations).toHaveLength(0);
    const refusedWorkflow = stack.temporal.workflow.getHandle(
      donationWorkflowId(deriveUuid(clientAScope(refusedKey))),
    );
    await expect(refusedWorkflow.describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);

    expect((await operator('POST', `/v1/campaigns/${campaignId}/close`)).status).toBe(200);
    expect((await operator('POST', '/v1/campaigns/nope-404/close')).status).toBe(404);

    // Ended campaigns refuse donations the same way.
    const ended = await createCampaign(stack.db, { endsAt: new Date(Date.now() - 1_000) });
    const late = await postDonation(stack.apiUrl, randomUUID(), donationBody(ended));
    expect(late.status).toBe(422);
    expect(await operator('GET', `/v1/campaigns/${ended}`).then((r) => r.json())).toMatchObject({
      status: 'OPEN',
      acceptingDonations: false,
    });
  });
});
