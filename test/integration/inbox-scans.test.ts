import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { createDatabase } from '../../src/db/database';
import type { Db } from '../../src/db/database';
import { forEachPage, WebhookInboxRepository } from '../../src/webhooks/webhook-inbox-repository';
import type { InboxEntry } from '../../src/webhooks/webhook-inbox-repository';
import { createCampaign } from '../support/stack';
import { createOwnDatabase } from '../support/own-database';
import type { OwnDatabase } from '../support/own-database';

/**
 * Issue 22, defect 9: the inbox scans read the oldest 100 rows with no cursor, so rows that never
 * apply (a late payment that ended not-paid, a delivery that keeps failing) hid every newer one.
 */
describe('inbox scans page past rows that never apply', () => {
  let own: OwnDatabase;
  let db: Db;
  let inbox: WebhookInboxRepository;
  beforeAll(async () => {
    own = await createOwnDatabase('inbox_scans');
    db = createDatabase({ connectionString: own.url, max: 2 });
    inbox = new WebhookInboxRepository(db);
  });
  afterAll(async () => {
    await db.destroy();
    await own.drop();
  });

  /** A donation closed without money, as a late payment finds it. */
  async function expiredDonation(campaignId: string): Promise<string> {
    const id = randomUUID();
    await db
      .insertInto('donations')
      .values({
        id,
        client_id: 'client-a',
        idempotency_key: id,
        campaign_id: campaignId,
        amount: 10_000,
        currency: 'IDR',
        donor_name: 'Ani',
        donor_email: 'ani@example.com',
        donor_anonymous: false,
        payment_method: 'qris',
        status: 'EXPIRED',
        provider: 'simulator',
        provider_reference: `sim_${id}`,
        workflow_id: `donation-${id}`,
      })
      .execute();
    return id;
  }

  /** `count` PAID rows for one donation, received an hour ago, one second apart. */
  async function paidRows(donationId: string, count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const event = {
        kind: 'payment' as const,
        eventKey: `paid-${donationId}-${i}`,
        donationRef: donationId,
        providerReference: `sim_${donationId}`,
        status: 'PAID' as const,
        amount: 10_000,
        currency: 'IDR',
        occurredAt: new Date().toISOString(),
      };
      await inbox.insert('simulator', event, '{}');
    }
    await db
      .updateTable('webhook_inbox')
      .set({ received_at: sql`now() - interval '1 hour' + id * interval '1 second'` })
      .where('donation_id', '=', donationId)
      .execute();
  }

  async function everyPage(
    scan: (after: Parameters<Parameters<typeof forEachPage>[1]>[0]) => Promise<InboxEntry[]>,
  ): Promise<string[]> {
    const seen: string[] = [];
    await forEachPage(100, scan, async (entry) => {
      seen.push(entry.id);
    });
    return seen;
  }

  test('the unapplied late payments scan reaches every row, each once', async () => {
    const campaignId = await createCampaign(db);
    const stale = await expiredDonation(campaignId);
    await paidRows(stale, 230);
    const newer = await expiredDonation(campaignId);
    await paidRows(newer, 1);

    const seen = await everyPage((after) => inbox.findUnappliedPayments(100, 1_000, after));
    expect(seen).toHaveLength(231);
    expect(new Set(seen).size).toBe(231);
  });

  test('the undelivered scan reaches every row, each once', async () => {
    const before = await everyPage((after) =>
      inbox.findUndelivered(100, { olderThanMs: 1_000 }, after),
    );
    const campaignId = await createCampaign(db);
    const failing = await expiredDonation(campaignId);
    await paidRows(failing, 150);

    const seen = await everyPage((after) =>
      inbox.findUndelivered(100, { olderThanMs: 1_000 }, after),
    );
    expect(seen).toHaveLength(before.length + 150);
    expect(new Set(seen).size).toBe(seen.length);
  });
});
