import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { simpleParser } from 'mailparser';
import { startMailSink } from '../../src/mail/mail-sink';
import { MailDeliveryRepository } from '../../src/receipts/mail-delivery-repository';
import type { MailSink } from '../../src/mail/mail-sink';
import { receiptMailWorkflowId, WorkflowType } from '../../workflows/contracts';
import type { ReceiptMailWorkflow } from '../../workflows/contracts';
import { resetDonationWorkflow } from '../money/workflow-control';
import { waitForStatus } from '../support/donations';
import { paymentOf } from '../support/money';
import { ops } from '../support/ops';
import { runReceipts, startMailStack } from '../support/mail-stack';
import { textOf } from '../support/pdf-text';
import { donate, refund } from '../support/reconciliation';
import { CLIENT_SECRET, OTHER_CLIENT_SECRET, createCampaign, eventually } from '../support/stack';
import type { Stack } from '../support/stack';

const DONATIONS = 24;

/**
 * Receipts end to end: confirmations numbered by two writers at once, some confirmations reset,
 * numbers 1..N with no gap and no repeat; one e-mail per document over real SMTP with its PDF;
 * a refund's credit note referencing its receipt; the PDF link's token and the client's read.
 */
describe('receipts', () => {
  let stack: Stack;
  let sink: MailSink;
  let stop: () => Promise<void>;
  const prefix = `T${randomUUID().replace(/-/g, '').slice(0, 6).toUpperCase()}`;

  beforeAll(async () => {
    // The writer numbers (and mails) every queued entry of its database: on the shared one it
    // would take every other file's donations too, hundreds when this file runs late.
    ({ stack, sink, stop } = await startMailStack('receipts', {
      autoPayMs: 50,
      env: { RECEIPT_PREFIX: prefix },
    }));
  });
  afterAll(async () => {
    await stop();
  });

  const runWriter = () => runReceipts(stack);

  const numbersOf = (series: 'receipt' | 'credit-note') =>
    stack.db
      .selectFrom('receipts')
      .select(['seq', 'number', 'donation_id', 'refers_to'])
      .where('organization', '=', prefix)
      .where('series', '=', series)
      .orderBy('seq')
      .execute();

  const queued = async (number: string | undefined) =>
    (await stack.db
      .selectFrom('mail_queue')
      .select('receipt_number')
      .where('receipt_number', '=', number ?? '')
      .executeTakeFirst()) !== undefined;

  const delivery = (number: string) =>
    stack.db
      .selectFrom('mail_deliveries')
      .select(['status', 'attempts'])
      .where('receipt_number', '=', number)
      .executeTakeFirst();

  /** The messages the sink saved, parsed, by Message-ID. */
  const mails = async () =>
    Promise.all(sink.received().map(async (file) => simpleParser(readFileSync(file))));

  it('numbers every confirmation once, without gaps, and mails each document once', async () => {
    const campaignId = await createCampaign(stack.db);
    const ids = await Promise.all(
      Array.from({ length: DONATIONS }, (_, i) => donate(stack, campaignId, 10_000 + i)),
    );
    await Promise.all(ids.map((id) => waitForStatus(stack, id, 'CONFIRMED')));
    // Two writers at once (an operator's run beside the schedule's), and resets of some
    // confirmations: each confirms again, which must not number anything twice.
    await Promise.all([
      runWriter(),
      runWriter(),
      ...ids.slice(0, 4).map((id) => resetDonationWorkflow(stack, id, 'last-task')),
    ]);
    await Promise.all(ids.slice(0, 4).map((id) => waitForStatus(stack, id, 'CONFIRMED')));
    await runWriter();

    const receipts = await numbersOf('receipt');
    expect(receipts.map((r) => r.seq)).toEqual(receipts.map((_, i) => i + 1));
    const mine = receipts.filter((r) => ids.includes(r.donation_id));
    expect(mine.map((r) => r.donation_id).sort()).toEqual([...ids].sort());

    const myNumbers = new Set(mine.map((r) => r.number));
    const delivered = await eventually(async () => {
      const found = (await mails()).filter((m) => myNumbers.has(numberOf(m.messageId)));
      return found.length >= myNumbers.size ? found : undefined;
    }, 60_000);
    const messageIds = delivered.map((m) => m.messageId);
    expect(new Set(messageIds).size).toBe(messageIds.length);
    expect(messageIds).toHaveLength(myNumbers.size);

    const first = delivered[0];
    const attachment = first?.attachments[0];
    expect(attachment?.contentType).toBe('application/pdf');
    const number = numberOf(first?.messageId);
    const row = mine.find((r) => r.number === number);
    const amount = 10_000 + ids.indexOf(row?.donation_id ?? '');
    const text = await textOf(attachment?.content ?? Buffer.alloc(0));
    expect(text).toContain(number);
    expect(text).toContain(`Rp ${amount.toLocaleString('id-ID')}`);
    expect(first?.to).toMatchObject({ text: 'ani@example.com' });
  });

  it('gives a refund a credit note that references the receipt, mailed once', async () => {
    const campaignId = await createCampaign(stack.db);
    const id = await donate(stack, campaignId, 40_000);
    await waitForStatus(stack, id, 'CONFIRMED');
    await refund(stack, id, 15_000, 'PARTIALLY_REFUNDED');
    await runWriter();
    const receipt = (await numbersOf('receipt')).find((r) => r.donation_id === id);
    const [note, ...more] = (await numbersOf('credit-note')).filter((r) => r.donation_id === id);
    expect(more).toEqual([]);
    expect(note?.number).toMatch(new RegExp(`^${prefix}-CN-\\d{4}-\\d{6}$`));
    expect(note?.refers_to).toBe(receipt?.number);
    const mail = await eventually(async () =>
      (await mails()).find((m) => numberOf(m.messageId) === note?.number),
    );
    expect(mail.subject).toContain('Credit note');
    const text = await textOf(mail.attachments[0]?.content ?? Buffer.alloc(0));
    expect(text).toContain(receipt?.number ?? '?');
    expect(text).toContain('Rp 15.000');
    // An operator's resend of a document sent already queues it and sends nothing twice.
    const resent = await ops(stack, 'mail', '--resend', note?.number ?? '', '--yes');
    expect(resent.out).toContain('Queued the mail');
    await runWriter();
    await eventually(async () => ((await queued(note?.number)) ? undefined : true));
    const copies = (await mails()).filter((m) => numberOf(m.messageId) === note?.number);
    expect(copies).toHaveLength(1);
  });

  it.each([
    ['a crash left claimed but never started', false],
    ['an operator terminated', true],
  ])('starts again a mail batch that %s', async (_, terminated) => {
    const campaignId = await createCampaign(stack.db);
    const id = await donate(stack, campaignId, 27_000);
    await waitForStatus(stack, id, 'CONFIRMED');
    await runWriter();
    const number = (await numbersOf('receipt')).find((r) => r.donation_id === id)?.number ?? '?';
    await eventually(async () => ((await delivery(number))?.status === 'sent' ? true : undefined));
    // Its delivery failed, and a batch claimed it two minutes ago, then stopped before sending.
    await sql`UPDATE mail_deliveries SET status = 'failed' WHERE receipt_number = ${number}`.execute(
      stack.db,
    );
    const batch = randomUUID();
    if (terminated) {
      const handle = await stack.temporal.workflow.start<ReceiptMailWorkflow>(
        WorkflowType.receiptMail,
        { workflowId: receiptMailWorkflowId(batch), taskQueue: `idle-${batch}`, args: [batch] },
      );
      await handle.terminate('stopped by an operator');
    }
    await sql`
      INSERT INTO mail_queue (receipt_number, batch, claimed_at)
      VALUES (${number}, ${batch}, now() - interval '2 minutes')
    `.execute(stack.db);
    await runWriter();
    await eventually(async () => ((await queued(number)) ? undefined : true));
    expect(await delivery(number)).toMatchObject({ status: 'sent', attempts: 2 });
  });

  it('leaves a document another attempt is sending, and sends it once that attempt lets go', async () => {
    const campaignId = await createCampaign(stack.db);
    const id = await donate(stack, campaignId, 27_700);
    await waitForStatus(stack, id, 'CONFIRMED');
    await runWriter();
    const number = (await numbersOf('receipt')).find((r) => r.donation_id === id)?.number ?? '?';
    await eventually(async () => ((await delivery(number))?.status === 'sent' ? true : undefined));
    const copies = async () =>
      (await mails()).filter((m) => numberOf(m.messageId) === number).length;
    const sentBefore = await copies();
    // Queued again, while an earlier attempt that outlived its time still holds its delivery.
    await sql`
      UPDATE mail_deliveries SET status = 'sending', held_until = now() + interval '5 minutes'
      WHERE receipt_number = ${number}
    `.execute(stack.db);
    await sql`INSERT INTO mail_queue (receipt_number) VALUES (${number})`.execute(stack.db);
    await runWriter();
    const batch = await eventually(async () => {
      const row = await stack.db
        .selectFrom('mail_queue')
        .select('batch')
        .where('receipt_number', '=', number)
        .executeTakeFirst();
      return row?.batch ?? undefined;
    });
    const handle = stack.temporal.workflow.getHandle(receiptMailWorkflowId(batch));
    await eventually(async () => {
      const { raw } = await handle.describe();
      const failure = raw.pendingActivities?.[0]?.lastFailure?.message ?? '';
      return failure.includes('held by another attempt') ? true : undefined;
    }, 30_000);
    expect(await copies()).toBe(sentBefore);
    expect(await queued(number)).toBe(true);

    // That attempt lets go: the batch's retry sends it.
    await sql`UPDATE mail_deliveries SET held_until = NULL WHERE receipt_number = ${number}`.execute(
      stack.db,
    );
    await expect(handle.result()).resolves.toMatchObject({ sent: 1 });
    expect(await copies()).toBe(sentBefore + 1);
    expect(await queued(number)).toBe(false);
  });

  it('records what a batch still holds as failed when its attempts are used up', async () => {
    const campaignId = await createCampaign(stack.db);
    const ids = [await donate(stack, campaignId, 28_000), await donate(stack, campaignId, 29_000)];
    await Promise.all(ids.map((id) => waitForStatus(stack, id, 'CONFIRMED')));
    await runWriter();
    const [never, sent] = (await numbersOf('receipt'))
      .filter((r) => ids.includes(r.donation_id))
      .map((r) => r.number);
    await eventually(async () => (await delivery(sent ?? ''))?.status === 'sent' || undefined);
    await eventually(async () => (await delivery(never ?? ''))?.status === 'sent' || undefined);
    // One never begun (its row gone), one sent before the batch's last attempt ended.
    await stack.db
      .deleteFrom('mail_deliveries')
      .where('receipt_number', '=', never ?? '')
      .execute();
    const batch = randomUUID();
    await stack.db
      .insertInto('mail_queue')
      .values([never ?? '', sent ?? ''].map((n) => ({ receipt_number: n, batch })))
      .execute();
    const failed = await new MailDeliveryRepository(stack.db).failBatch(
      batch,
      (n) => `<${n}@galang.test>`,
      'SMTP send failed (ECONNECTION)',
    );
    expect(failed).toBe(2);
    expect(await queued(never)).toBe(false);
    expect(await queued(sent)).toBe(false);
    expect(await delivery(never ?? '')).toMatchObject({ status: 'failed', attempts: 1 });
    expect(await delivery(sent ?? '')).toMatchObject({ status: 'sent' });
  });

  it('gives a dispute won a receipt that reverses its credit note, each mailed once', async () => {
    const campaignId = await createCampaign(stack.db);
    const id = await donate(stack, campaignId, 30_000);
    await waitForStatus(stack, id, 'CONFIRMED');
    const dispute = stack.simulator.openDispute(await paymentOf(stack, id));
    await waitForStatus(stack, id, 'CHARGED_BACK');
    await runWriter();
    stack.simulator.closeDispute(dispute.id, 'won');
    await waitForStatus(stack, id, 'CONFIRMED');
    await runWriter();

    const [receipt, giveBack, ...more] = (await numbersOf('receipt')).filter(
      (r) => r.donation_id === id,
    );
    const notes = (await numbersOf('credit-note')).filter((r) => r.donation_id === id);
    expect(more).toEqual([]);
    expect(notes.map((n) => n.refers_to)).toEqual([receipt?.number]);
    expect(receipt?.refers_to).toBeNull();
    // Money that came back in: a receipt, in the receipts' own sequence.
    expect(giveBack?.number).toMatch(new RegExp(`^${prefix}-\\d{4}-\\d{6}$`));
    expect(giveBack?.refers_to).toBe(notes[0]?.number);
    const mail = await eventually(async () =>
      (await mails()).find((m) => numberOf(m.messageId) === giveBack?.number),
    );
    expect(mail.subject).toContain('counted as your donation again');
    const text = await textOf(mail.attachments[0]?.content ?? Buffer.alloc(0));
    expect(text).toContain(`Reverses credit note ${notes[0]?.number ?? '?'}`);
    expect(text).toContain('Rp 30.000');
    const documents = [receipt?.number, notes[0]?.number, giveBack?.number];
    const sent = async () =>
      (await mails()).filter((m) => documents.includes(numberOf(m.messageId)));
    await eventually(async () => ((await sent()).length >= 3 ? true : undefined));
    expect(await sent()).toHaveLength(3);
  });

  it('serves the PDF with the link token and the documents to their client only', async () => {
    const campaignId = await createCampaign(stack.db);
    const id = await donate(stack, campaignId, 26_000);
    await waitForStatus(stack, id, 'CONFIRMED');
    await runWriter();
    const read = (secret: string) =>
      fetch(`${stack.apiUrl}/v1/donations/${id}/receipt`, {
        headers: { authorization: `Bearer ${secret}` },
      });
    const answer = await read(CLIENT_SECRET);
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as { receipt: { number: string; pdfUrl: string } };
    expect((await read(OTHER_CLIENT_SECRET)).status).toBe(404);

    const url = new URL(body.receipt.pdfUrl);
    const pdf = await fetch(`${stack.apiUrl}${url.pathname}${url.search}`);
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    const bytes = Buffer.from(await pdf.arrayBuffer());
    const again = Buffer.from(
      await (await fetch(`${stack.apiUrl}${url.pathname}${url.search}`)).arrayBuffer(),
    );
    expect(again.equals(bytes)).toBe(true);
    expect(await textOf(bytes)).toContain(body.receipt.number);

    const forged = await fetch(`${stack.apiUrl}${url.pathname}?token=${'A'.repeat(43)}`);
    expect(forged.status).toBe(404);
    expect(forged.headers.get('content-type')).toContain('application/problem+json');
    const unknown = await fetch(
      `${stack.apiUrl}/v1/receipts/${prefix}-1999-000001.pdf${url.search}`,
    );
    expect(unknown.status).toBe(404);
  });

  it('keeps a mail that SMTP refused to take, lists it, and sends it once SMTP is back', async () => {
    const port = sink.port;
    await sink.stop();
    const campaignId = await createCampaign(stack.db);
    const id = await donate(stack, campaignId, 31_000);
    await waitForStatus(stack, id, 'CONFIRMED');
    await runWriter();
    const number = (await numbersOf('receipt')).find((r) => r.donation_id === id)?.number ?? '?';
    const unsent = async () => {
      const listed = await ops(stack, 'mail', '--json');
      expect(listed.code).toBe(0);
      return (JSON.parse(listed.out) as { receipt_number: string; status: string }[]).find(
        (r) => r.receipt_number === number,
      );
    };
    await expect(eventually(unsent, 30_000)).resolves.toMatchObject({ status: 'sending' });

    sink = await startMailSink({ host: '127.0.0.1', port, dir: sink.dir });
    const mail = await eventually(
      async () => (await mails()).find((m) => numberOf(m.messageId) === number),
      60_000,
    );
    expect(mail.subject).toContain(number);
    await eventually(async () => ((await unsent()) === undefined ? true : undefined), 10_000);
  });

  it('numbers the entries a deployment had before receipts, and mails none of them', async () => {
    // The migration queues the ledger's past entries with mail = false, as this one is.
    const campaignId = await createCampaign(stack.db);
    const id = await donate(stack, campaignId, 12_000);
    await waitForStatus(stack, id, 'CONFIRMED');
    await sql`
      UPDATE receipt_queue SET mail = false
      WHERE ledger_entry_id IN (SELECT id FROM donation_ledger WHERE donation_id = ${id})
    `.execute(stack.db);
    await runWriter();
    const number = (await numbersOf('receipt')).find((r) => r.donation_id === id)?.number;
    expect(number).toMatch(new RegExp(`^${prefix}-\\d{4}-\\d{6}$`));
    const queued = await stack.db
      .selectFrom('mail_deliveries')
      .select('receipt_number')
      .where('receipt_number', '=', number ?? '')
      .execute();
    expect(queued).toEqual([]);
    expect((await mails()).filter((m) => numberOf(m.messageId) === number)).toEqual([]);
  });
});

/** The document number in a receipt's Message-ID (`<number@domain>`). */
function numberOf(messageId: string | undefined): string {
  return /^<([^@]+)@/.exec(messageId ?? '')?.[1] ?? '';
}
