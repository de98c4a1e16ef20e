import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { ScheduleNotFoundError } from '@temporalio/client';
import { pledgeScheduleId } from '../../workflows/contracts';
import { clientAScope, postDonation, totalsOf, waitForStatus } from '../support/donations';
import { deriveUuid } from '../../src/idempotency/idempotency-key';
import {
  historiesHolding,
  lmdbFilesHolding,
  postgresFilesHolding,
  postgresRowsHolding,
  redisKeysHolding,
} from '../support/erasure-probes';
import { temporalLogs } from '../support/quiet-temporal';
import { runReceipts, startMailStack } from '../support/mail-stack';
import { ops } from '../support/ops';
import { textOf } from '../support/pdf-text';
import { CLIENT_SECRET, OPERATOR_SECRET, createCampaign, eventually } from '../support/stack';
import type { Stack } from '../support/stack';

/**
 * Erasure you can prove (issue 25): a donor's donations confirmed, numbered, mailed, shown on
 * the wall and read back; then erased, and neither their name nor their e-mail is anywhere
 * galang keeps data (every relation file of Postgres after a VACUUM FULL, every Redis key, the
 * LMDB files, every workflow history decoded, the API's and the worker's logs) but the mail
 * sink, which stands for the donor's own inbox. The money and the receipt numbers stay.
 */
describe('donor erasure', () => {
  let stack: Stack;
  let stop: () => Promise<void>;
  const apiLines: string[] = [];
  const tag = randomUUID().slice(0, 8);
  const donor = { name: `Ratna Lestari ${tag}`, email: `ratna.${tag}@example.org` };
  const other = { name: `Bima Santoso ${tag}`, email: `bima.${tag}@example.org` };
  const needles = [donor.name, donor.email, `Ratna ${tag}`];

  beforeAll(async () => {
    ({ stack, stop } = await startMailStack('erasure', {
      autoPayMs: 50,
      env: { LOG_LEVEL: 'debug' },
      apiLogger: { level: 'debug', stream: { write: (line: string) => apiLines.push(line) } },
    }));
  });
  afterAll(async () => {
    await stop();
  });

  const donate = async (who: typeof donor, amount: number, anonymous: boolean) => {
    const key = `erase-${randomUUID()}`;
    const response = await postDonation(stack.apiUrl, key, {
      campaignId,
      amount,
      currency: 'IDR',
      donor: { ...who, anonymous },
      message: `Semangat dari Ratna ${tag}`.replace('Ratna', who.name.split(' ')[0] ?? ''),
      paymentMethod: 'qris',
    });
    expect(response.status).toBe(202);
    return deriveUuid(clientAScope(key));
  };
  const erase = (body: unknown) =>
    fetch(`${stack.apiUrl}/v1/donor-erasures`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OPERATOR_SECRET}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const asClient = (url: string) =>
    fetch(`${stack.apiUrl}${url}`, { headers: { authorization: `Bearer ${CLIENT_SECRET}` } });
  const receiptText = async (donationId: string) => {
    const { receipt } = (await (await asClient(`/v1/donations/${donationId}/receipt`)).json()) as {
      receipt: { number: string; pdfUrl: string };
    };
    // The link carries the configured public URL; the same path and token, on the test's port.
    const link = new URL(receipt.pdfUrl);
    const pdf = await fetch(`${stack.apiUrl}${link.pathname}${link.search}`);
    return { number: receipt.number, text: await textOf(Buffer.from(await pdf.arrayBuffer())) };
  };
  let campaignId = '';

  it('leaves neither name nor e-mail anywhere, and the money and receipts as they were', async () => {
    campaignId = await createCampaign(stack.db);
    const named = await donate(donor, 40_000, false);
    const hidden = await donate(donor, 15_000, true);
    const kept = await donate(other, 25_000, false);
    // A monthly pledge of theirs: its row holds the donor too, and its schedule must stop.
    const pledge = await fetch(`${stack.apiUrl}/v1/pledges`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${CLIENT_SECRET}`,
        'content-type': 'application/json',
        'idempotency-key': `erase-pledge-${tag}`,
      },
      body: JSON.stringify({
        campaignId,
        amount: 20_000,
        currency: 'IDR',
        donor: { ...donor, anonymous: false },
        // A card: the provider keeps it for the next periods, a reference that is the donor's.
        paymentMethod: 'card',
        interval: 'monthly',
      }),
    });
    expect(pledge.status).toBe(202);
    const pledged = (await pledge.json()) as {
      pledge: { id: string };
      firstDonation: { id: string };
    };
    for (const id of [named, hidden, kept, pledged.firstDonation.id]) {
      await waitForStatus(stack, id, 'CONFIRMED');
    }
    const keptCard = () =>
      stack.db
        .selectFrom('pledges')
        .select('saved_method')
        .where('id', '=', pledged.pledge.id)
        .executeTakeFirstOrThrow();
    await eventually(async () => (await keptCard()).saved_method ?? undefined, 30_000);
    await runReceipts(stack, `receipts-erasure-${tag}`);
    const before = await receiptText(named);
    expect(before.text).toContain(donor.name);
    // The wall's page, cached in Redis, names the donor: a copy the erasure must reach.
    const wall = await (await fetch(`${stack.apiUrl}/v1/campaigns/${campaignId}/donations`)).text();
    expect(wall).toContain(donor.name);
    expect(await redisKeysHolding(stack, needles)).not.toEqual([]);
    expect(await postgresRowsHolding(stack.db, needles)).toEqual(
      expect.arrayContaining(['donations']),
    );
    // The planner's statistics keep values too (the address, given twice, is a common value).
    await sql`ANALYZE donations`.execute(stack.db);
    expect(await postgresFilesHolding(stack.db, needles)).toEqual(
      expect.arrayContaining(['donations', 'pg_statistic']),
    );
    const totals = await totalsOf(stack, campaignId);

    const response = await erase({ email: donor.email.toUpperCase() });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ erasedDonations: 3 });

    expect(await postgresRowsHolding(stack.db, needles)).toEqual([]);
    expect(await postgresFilesHolding(stack.db, needles)).toEqual([]);
    expect(await redisKeysHolding(stack, needles)).toEqual([]);
    expect(lmdbFilesHolding(stack, needles)).toEqual([]);
    expect(await historiesHolding(stack, needles)).toEqual([]);
    const asText = (entry: unknown) =>
      JSON.stringify(entry, (_, value: unknown) =>
        typeof value === 'bigint' ? value.toString() : value,
      );
    const logs = [...apiLines, ...temporalLogs.map(asText)];
    expect(logs.length).toBeGreaterThan(10);
    expect(logs.filter((line) => needles.some((needle) => line.includes(needle)))).toEqual([]);
    // What the API shows now, through every cache: the pseudonym, the same money.
    const after = await receiptText(named);
    expect(after.number).toBe(before.number);
    expect(after.text).toContain('Erased donor');
    const view = (await (await asClient(`/v1/donations/${named}`)).json()) as {
      donor: { name: string };
      message: string | null;
      amount: number;
    };
    expect(view).toMatchObject({ donor: { name: 'Erased donor' }, message: null, amount: 40_000 });
    const wallAfter = await (
      await fetch(`${stack.apiUrl}/v1/campaigns/${campaignId}/donations`)
    ).text();
    expect(wallAfter).toContain(other.name);
    expect(needles.some((needle) => wallAfter.includes(needle))).toBe(false);
    expect(await totalsOf(stack, campaignId)).toEqual(totals);
    // The pledge is cancelled and its schedule gone: no period is charged without a donor.
    const pledgeRow = await stack.db
      .selectFrom('pledges')
      .select('status')
      .where('id', '=', pledged.pledge.id)
      .executeTakeFirstOrThrow();
    expect(pledgeRow.status).toBe('CANCELLED');
    expect((await keptCard()).saved_method).toBeNull();
    await expect(
      stack.temporal.schedule.getHandle(pledgeScheduleId(pledged.pledge.id)).describe(),
    ).rejects.toBeInstanceOf(ScheduleNotFoundError);
    // The other donor is untouched; the audit log says who erased, never whom by address.
    expect(await postgresRowsHolding(stack.db, [other.name, other.email])).toContain('donations');
    const audit = await stack.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'erase')
      .execute();
    expect(audit).toHaveLength(1);
    expect(JSON.stringify(audit)).not.toContain(tag);
    // Again: nothing matches the address any more.
    expect(await (await erase({ email: donor.email })).json()).toMatchObject({
      erasedDonations: 0,
    });
  });

  it('erases by a donation id from the ops CLI, dry run first', async () => {
    const id = await donate(other, 10_000, false);
    await waitForStatus(stack, id, 'CONFIRMED');
    const dry = await ops(stack, 'erase', '--donation', id);
    expect(dry.code).toBe(0);
    expect(await postgresRowsHolding(stack.db, [other.email])).toContain('donations');
    const done = await ops(stack, 'erase', '--donation', id, '--yes');
    expect(done.code).toBe(0);
    expect(JSON.parse(done.out)).toMatchObject({ erasedDonations: 2 });
    expect(await postgresRowsHolding(stack.db, [other.name, other.email])).toEqual([]);
  });

  it('refuses what is not an address or a donation id', async () => {
    for (const body of [{}, { email: 'not an address' }, { donationId: 'x' }, { email: '' }]) {
      const response = await erase(body);
      expect(response.status).toBe(400);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
    }
    expect((await ops(stack, 'erase', '--email', 'nope')).code).toBe(2);
  });
});
