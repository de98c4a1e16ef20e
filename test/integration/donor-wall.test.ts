import { randomUUID } from 'node:crypto';
import { AuditRepository } from '../../src/audit/audit-repository';
import { CampaignRepository } from '../../src/campaigns/campaign-repository';
import { DonationRepository } from '../../src/donations/donation-repository';
import { DonorDetailsRepository } from '../../src/donations/donor-details-repository';
import { LedgerRepository } from '../../src/ledger/ledger-repository';
import { donationWorkflowId } from '../../workflows/contracts';
import { postDonation, waitForStatus } from '../support/donations';
import {
  OPERATOR_SECRET,
  createCampaign,
  donationBody,
  eventually,
  startStack,
} from '../support/stack';
import type { Stack } from '../support/stack';

interface WallPage {
  campaignId: string;
  currency: string;
  hideAmounts: boolean;
  donations: { name: string; amount: number | null; message: string | null; confirmedAt: string }[];
  next: string | null;
}

/**
 * The donor wall over real HTTP: keyset pages, ETag and 304, hidden amounts, an operator hiding
 * a message (audited, cached pages dropped), links removed, and anonymity: an anonymous donor's
 * private name in no public answer, page or cached value.
 */
describe('the donor wall', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ autoPayMs: 100 });
  });
  afterAll(async () => {
    await stack.stop();
  });

  const wallUrl = (campaignId: string, query = '') =>
    `${stack.apiUrl}/v1/campaigns/${campaignId}/donations${query}`;
  const readWall = async (campaignId: string, query = '') => {
    const response = await fetch(wallUrl(campaignId, query));
    expect(response.status).toBe(200);
    return {
      response,
      text: await response.clone().text(),
      page: (await response.json()) as WallPage,
    };
  };

  /** A donation recorded and credited through the repositories, as the workflow would. */
  async function credit(
    campaignId: string,
    donor: { name: string; anonymous: boolean },
    amount: number,
    message?: string,
  ): Promise<string> {
    const donationId = randomUUID();
    // The edge's part: the donor's data waits in donor_details for the record.
    await new DonorDetailsRepository(stack.db).save(donationId, {
      donor: { ...donor, email: 'donor@example.com' },
      message: message ?? donationBody(campaignId, amount).message,
    });
    await new DonationRepository(stack.db).insert({
      ...donationBody(campaignId, amount),
      donationId,
      clientId: 'client-a',
      idempotencyKey: `wall-${donationId}`,
      workflowId: donationWorkflowId(donationId),
      provider: 'simulator',
      paymentTimeoutSeconds: 60,
      correlationId: donationId,
    });
    await new LedgerRepository(stack.db).confirm(donationId);
    return donationId;
  }

  const hide = (donationId: string) =>
    fetch(`${stack.apiUrl}/v1/donations/${donationId}/message/hide`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OPERATOR_SECRET}` },
    });

  it('pages newest first with an opaque cursor, each row once', async () => {
    const campaignId = await createCampaign(stack.db);
    const names = ['Ani', 'Budi', 'Citra', 'Dewi', 'Eko'];
    for (const [index, name] of names.entries()) {
      await credit(campaignId, { name, anonymous: false }, 10_000 * (index + 1));
    }
    const seen: WallPage['donations'] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor === null ? '?limit=2' : `?limit=2&cursor=${cursor}`;
      const { page, response } = await readWall(campaignId, query);
      expect(response.headers.get('cache-control')).toContain('public');
      expect(page.donations.length).toBeLessThanOrEqual(2);
      seen.push(...page.donations);
      cursor = page.next;
      pages++;
    } while (cursor !== null && pages < 10);
    expect(pages).toBe(3);
    expect(seen.map((d) => d.name)).toEqual([...names].reverse());
    expect(seen.map((d) => d.amount)).toEqual([50_000, 40_000, 30_000, 20_000, 10_000]);
    expect(seen[0]).toEqual({
      name: 'Eko',
      amount: 50_000,
      message: 'Semangat!',
      confirmedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as string,
    });

    const bad = await fetch(wallUrl(campaignId, '?cursor=bm90LWEtY3Vyc29y'));
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toContain('application/problem+json');
    expect(((await bad.json()) as { code: string }).code).toBe('validation-failed');
    const missing = await fetch(wallUrl(`no-such-${randomUUID().slice(0, 8)}`));
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { code: string }).code).toBe('campaign-not-found');
  });

  it('answers 304 to its ETag until a donation confirms, then shows it', async () => {
    const campaignId = await createCampaign(stack.db);
    const empty = await readWall(campaignId);
    expect(empty.page).toEqual({
      campaignId,
      currency: 'IDR',
      hideAmounts: false,
      donations: [],
      next: null,
    });
    const etag = empty.response.headers.get('etag') ?? '';
    expect(etag).toMatch(/^"wall-/);
    const notModified = await fetch(wallUrl(campaignId), { headers: { 'if-none-match': etag } });
    expect(notModified.status).toBe(304);
    expect(await notModified.text()).toBe('');

    // Through the whole pipeline: the worker drops the cached page when the donation confirms.
    const posted = await postDonation(stack.apiUrl, randomUUID(), {
      ...donationBody(campaignId, 75_000),
      donor: { name: 'Fajar', email: 'fajar@example.com', anonymous: false },
    });
    expect(posted.status).toBe(202);
    const { id } = (await posted.json()) as { id: string };
    await waitForStatus(stack, id, 'CONFIRMED');
    const changed = await eventually(async () => {
      const response = await fetch(wallUrl(campaignId), { headers: { 'if-none-match': etag } });
      return response.status === 200 ? ((await response.json()) as WallPage) : undefined;
    });
    expect(changed.donations).toEqual([
      expect.objectContaining({ name: 'Fajar', amount: 75_000, message: 'Semangat!' }),
    ]);
  });

  it('shows no amounts for a campaign that hides them', async () => {
    const created = await fetch(`${stack.apiUrl}/v1/campaigns`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${OPERATOR_SECRET}`,
        'content-type': 'application/json',
        'idempotency-key': randomUUID(),
      },
      body: JSON.stringify({
        title: 'Quiet giving',
        goalAmount: 1_000_000,
        currency: 'IDR',
        hideAmounts: true,
      }),
    });
    expect(created.status).toBe(201);
    const campaign = (await created.json()) as { id: string; hideAmounts: boolean };
    expect(campaign.hideAmounts).toBe(true);
    await credit(campaign.id, { name: 'Gita', anonymous: false }, 123_456);
    const { page, text } = await readWall(campaign.id);
    expect(page.hideAmounts).toBe(true);
    expect(page.donations).toEqual([expect.objectContaining({ name: 'Gita', amount: null })]);
    expect(text).not.toContain('123456');

    // The default stays: amounts shown.
    const shown = await createCampaign(stack.db);
    expect((await new CampaignRepository(stack.db).progress(shown))?.hideAmounts).toBe(false);
  });

  it('removes links, and hides a message on an operator’s word, audited and uncached', async () => {
    const campaignId = await createCampaign(stack.db);
    const spam = await credit(
      campaignId,
      { name: 'Hadi', anonymous: false },
      20_000,
      'Cheap deals at https://spam.example/x and www.spam.xyz, mail me at hadi@example.com',
    );
    const before = await readWall(campaignId);
    expect(before.page.donations[0]?.message).toBe(
      'Cheap deals at [link removed] and [link removed], mail me at [link removed]',
    );
    const etag = before.response.headers.get('etag') ?? '';

    const first = await hide(spam);
    expect(first.status).toBe(200);
    const hidden = (await first.json()) as { donationId: string; hiddenAt: string };
    expect(hidden).toEqual({
      donationId: spam,
      messageHidden: true,
      hiddenAt: expect.any(String) as string,
    });
    // Idempotent: the first hiding stays.
    const again = await hide(spam);
    expect(again.status).toBe(200);
    expect(((await again.json()) as { hiddenAt: string }).hiddenAt).toBe(hidden.hiddenAt);

    // The cached page was dropped: the old ETag no longer matches, and the message is gone.
    const after = await fetch(wallUrl(campaignId), { headers: { 'if-none-match': etag } });
    expect(after.status).toBe(200);
    const page = (await after.json()) as WallPage;
    expect(page.donations).toEqual([
      expect.objectContaining({ name: 'Hadi', amount: 20_000, message: null }),
    ]);

    const rows = await new AuditRepository(stack.db).list({ action: 'message-hide' }, 100);
    const mine = rows.filter((row) => row.donationId === spam);
    expect(mine).toHaveLength(2);
    expect(mine[0]).toMatchObject({
      actor: { kind: 'operator', id: 'ops' },
      workflowId: donationWorkflowId(spam),
      outcome: expect.objectContaining({ outcome: 'succeeded', status: 200 }) as unknown,
    });

    const unknown = await hide(randomUUID());
    expect(unknown.status).toBe(404);
    const anonymousCall = await fetch(`${stack.apiUrl}/v1/donations/${spam}/message/hide`, {
      method: 'POST',
    });
    expect(anonymousCall.status).toBe(401);
  });

  it("never shows an anonymous donor's private name: not in the wall, the page or the cache", async () => {
    const campaignId = await createCampaign(stack.db);
    const secret = `Rahasia${randomUUID().slice(0, 8)}`;
    const posted = await postDonation(stack.apiUrl, randomUUID(), {
      ...donationBody(campaignId, 30_000),
      donor: { name: secret, email: `${secret.toLowerCase()}@example.com`, anonymous: true },
      message: 'Untuk warga',
    });
    expect(posted.status).toBe(202);
    const { id } = (await posted.json()) as { id: string };
    await waitForStatus(stack, id, 'CONFIRMED');
    await credit(campaignId, { name: 'Indah', anonymous: false }, 10_000);

    const bodies: string[] = [];
    const wall = await eventually(async () => {
      const { page, text } = await readWall(campaignId, '?limit=1');
      return page.next === null ? undefined : { page, text };
    });
    bodies.push(wall.text);
    const second = await readWall(campaignId, `?limit=1&cursor=${wall.page.next ?? ''}`);
    bodies.push(second.text, (await readWall(campaignId)).text);
    const names = [...wall.page.donations, ...second.page.donations].map((d) => d.name);
    expect(names.sort()).toEqual(['Anonymous', 'Indah']);

    for (const path of [
      `/campaigns/${campaignId}`,
      `/demo/campaigns/${campaignId}`,
      `/v1/campaigns/${campaignId}/progress`,
    ]) {
      const response = await fetch(`${stack.apiUrl}${path}`);
      expect(response.status).toBe(200);
      bodies.push(await response.text());
    }
    // Every cached value of the campaign, the wall's pages among them.
    const prefix = stack.config.redisKeyPrefix;
    const keys = await stack.redis.keys(`${prefix}campaign:${campaignId}:*`);
    const wallPages = keys.filter((key) => key.includes(':wall:page:'));
    expect(wallPages.length).toBeGreaterThanOrEqual(3);
    for (const key of keys) {
      const type = await stack.redis.type(key.slice(prefix.length));
      if (type === 'string') bodies.push((await stack.redis.get(key.slice(prefix.length))) ?? '');
    }
    expect(bodies.join('\n')).toContain('Anonymous');
    for (const body of bodies) {
      expect(body).not.toContain(secret);
      expect(body.toLowerCase()).not.toContain(secret.toLowerCase());
    }
    // The private name is kept, apart: the donor's own read still has it.
    const row = await stack.db
      .selectFrom('donations')
      .select(['donor_name', 'public_name'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ donor_name: secret, public_name: 'Anonymous' });
  });
});
