import { sql } from 'kysely';
import type { Db } from '../db/database';
import type { ReceiptSeries } from '../db/schema';
import type { LedgerEntryType } from '../../workflows/contracts';
import { receiptNumber } from './receipt-number';

/** The organization whose sequences a writer numbers. */
export interface ReceiptIssuer {
  /** The numbers' prefix, which also names the organization's sequences. */
  prefix: string;
  /** The year of a document is the year in this zone when its money moved. */
  timeZone: string;
}

/** What one numbering pass did. */
export interface IssuedBatch {
  issued: string[];
  /** More entries wait: the writer goes on at once. */
  more: boolean;
}

/** A numbered document with what its PDF and e-mail show. */
export interface ReceiptRecord {
  number: string;
  series: ReceiptSeries;
  refersTo: string | null;
  issuedAt: Date;
  donationId: string;
  clientId: string;
  amount: number;
  currency: string;
  movedAt: Date;
  campaignTitle: string;
  donorName: string;
  donorAnonymous: boolean;
  donorEmail: string;
  paymentMethod: string;
  /** The pledge whose period the donation is, if it is one: its e-mail carries the link. */
  pledgeId: string | null;
}

interface DueEntry {
  id: number;
  mail: boolean;
  donation_id: string;
  entry_type: LedgerEntryType;
  year: number;
  /** The ledger entry this one undoes, whose document it names: see {@link issueDue}. */
  reverses: number | null;
}

/** Money that left the campaign gets a credit note; money that came (back) in, a receipt. */
const SERIES: Record<LedgerEntryType, ReceiptSeries> = {
  DONATION: 'receipt',
  REFUND: 'credit-note',
  CHARGEBACK: 'credit-note',
  REFUND_REVERSAL: 'receipt',
  CHARGEBACK_REVERSAL: 'receipt',
};

/** Receipts and credit notes: their numbering and reads (their mail: MailDeliveryRepository). */
export class ReceiptRepository {
  constructor(private readonly db: Db) {}

  /**
   * Numbers up to `limit` queued ledger entries, in ledger order, in one transaction: the queue
   * rows go as the numbers come, so a failed pass leaves neither a hole nor a number twice.
   * The advisory lock makes a second writer (an operator's run beside the schedule's) wait.
   * A document names the one it reverses: a refund's or chargeback's credit note the donation's
   * receipt; a give-back's receipt (the refund failed, the dispute was won) that credit note.
   * What it reverses is an earlier ledger entry, so numbered before it, here or in a past pass.
   */
  async issueDue(issuer: ReceiptIssuer, limit: number): Promise<IssuedBatch> {
    return this.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(hashtext(${`receipts:${issuer.prefix}`}))`.execute(
        trx,
      );
      const { rows: due } = await sql<DueEntry>`
        SELECT l.id, q.mail, l.donation_id, l.entry_type,
               extract(year FROM l.created_at AT TIME ZONE ${issuer.timeZone})::int AS year,
               (SELECT o.id FROM donation_ledger o
                 WHERE o.donation_id = l.donation_id AND o.id < l.id
                   AND CASE l.entry_type
                         WHEN 'REFUND' THEN o.entry_type = 'DONATION'
                         WHEN 'CHARGEBACK' THEN o.entry_type = 'DONATION'
                         WHEN 'REFUND_REVERSAL' THEN
                           o.entry_type = 'REFUND' AND o.external_ref = l.external_ref
                         WHEN 'CHARGEBACK_REVERSAL' THEN
                           o.entry_type = 'CHARGEBACK' AND o.external_ref = l.external_ref
                         ELSE false
                       END
                 ORDER BY o.id LIMIT 1) AS reverses
        FROM receipt_queue q JOIN donation_ledger l ON l.id = q.ledger_entry_id
        ORDER BY q.ledger_entry_id
        LIMIT ${limit + 1}
        FOR UPDATE OF q
      `.execute(trx);
      const batch = due.slice(0, limit);
      if (batch.length === 0) return { issued: [], more: false };
      const { rows: last } = await sql<{ series: ReceiptSeries; year: number; seq: number }>`
        SELECT series, year, max(seq)::int AS seq FROM receipts
        WHERE organization = ${issuer.prefix}
          AND year IN (${sql.join([...new Set(batch.map((e) => e.year))])})
        GROUP BY series, year
      `.execute(trx);
      const next = new Map(last.map((r) => [`${r.series}:${String(r.year)}`, r.seq]));
      const numberOf = await this.numbersOf(trx, batch);
      const mailed = new Set(batch.filter((e) => e.mail).map((e) => e.id));
      const rows = batch.map((entry) => {
        const series = SERIES[entry.entry_type];
        const key = `${series}:${String(entry.year)}`;
        const seq = (next.get(key) ?? 0) + 1;
        next.set(key, seq);
        const number = receiptNumber(issuer.prefix, series, entry.year, seq);
        numberOf.set(entry.id, number);
        return {
          number,
          organization: issuer.prefix,
          series,
          year: entry.year,
          seq,
          ledger_entry_id: entry.id,
          donation_id: entry.donation_id,
          refers_to: entry.reverses === null ? null : (numberOf.get(entry.reverses) ?? null),
        };
      });
      await trx.insertInto('receipts').values(rows).execute();
      const toMail = rows.filter((r) => mailed.has(r.ledger_entry_id));
      if (toMail.length > 0) {
        await trx
          .insertInto('mail_queue')
          .values(toMail.map((r) => ({ receipt_number: r.number })))
          .execute();
      }
      await trx
        .deleteFrom('receipt_queue')
        .where(
          'ledger_entry_id',
          'in',
          batch.map((e) => e.id),
        )
        .execute();
      return { issued: rows.map((r) => r.number), more: due.length > limit };
    });
  }

  /** The numbers already given to the entries a batch's documents reverse, by ledger entry. */
  private async numbersOf(trx: Db, batch: DueEntry[]): Promise<Map<number, string>> {
    const reversed = batch.flatMap((e) => (e.reverses === null ? [] : [e.reverses]));
    if (reversed.length === 0) return new Map();
    const found = await trx
      .selectFrom('receipts')
      .select(['ledger_entry_id', 'number'])
      .where('ledger_entry_id', 'in', reversed)
      .execute();
    return new Map(found.map((r) => [r.ledger_entry_id, r.number]));
  }

  async find(number: string): Promise<ReceiptRecord | undefined> {
    const [found] = await this.records().where('r.number', '=', number).execute();
    return found && toRecord(found);
  }

  /** A donation's receipt and credit notes, in the order they were numbered. */
  async forDonation(donationId: string): Promise<ReceiptRecord[]> {
    const rows = await this.records()
      .where('r.donation_id', '=', donationId)
      .orderBy('r.ledger_entry_id')
      .execute();
    return rows.map(toRecord);
  }

  /** The client a donation belongs to, or undefined when there is no such donation. */
  async donationClient(donationId: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('donations')
      .select('client_id')
      .where('id', '=', donationId)
      .executeTakeFirst();
    return row?.client_id;
  }

  private records() {
    return this.db
      .selectFrom('receipts as r')
      .innerJoin('donation_ledger as l', 'l.id', 'r.ledger_entry_id')
      .innerJoin('donations as d', 'd.id', 'r.donation_id')
      .innerJoin('campaigns as c', 'c.id', 'd.campaign_id')
      .leftJoin('pledge_periods as p', 'p.donation_id', 'r.donation_id')
      .select([
        'p.pledge_id',
        'r.number',
        'r.series',
        'r.refers_to',
        'r.issued_at',
        'r.donation_id',
        'd.client_id',
        'l.amount',
        'l.currency',
        'l.created_at as moved_at',
        'c.title',
        'd.donor_name',
        'd.donor_anonymous',
        'd.donor_email',
        'd.payment_method',
      ]);
  }
}

function toRecord(row: {
  number: string;
  series: ReceiptSeries;
  refers_to: string | null;
  issued_at: Date;
  donation_id: string;
  client_id: string;
  amount: number;
  currency: string;
  moved_at: Date;
  title: string;
  donor_name: string;
  donor_anonymous: boolean;
  donor_email: string;
  payment_method: string;
  pledge_id: string | null;
}): ReceiptRecord {
  return {
    number: row.number,
    series: row.series,
    refersTo: row.refers_to,
    issuedAt: row.issued_at,
    donationId: row.donation_id,
    clientId: row.client_id,
    amount: Math.abs(row.amount),
    currency: row.currency.trim(),
    movedAt: row.moved_at,
    campaignTitle: row.title,
    donorName: row.donor_name,
    donorAnonymous: row.donor_anonymous,
    donorEmail: row.donor_email,
    paymentMethod: row.payment_method,
    pledgeId: row.pledge_id,
  };
}
