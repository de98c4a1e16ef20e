import { sql } from 'kysely';
import type { Db } from '../db/database';
import type { MailDeliveryStatus } from '../db/schema';

/** How long an attempt holds a delivery it sends: past the longest SMTP exchange it can wait on. */
const HOLD_SECONDS = 300;

/**
 * A numbered document's e-mail: the queue the numbering fills, and the delivery recorded before
 * and after the SMTP exchange, so a document is sent once. The only SQL about them.
 */
export class MailDeliveryRepository {
  constructor(private readonly db: Db) {}

  /**
   * Gives up to `limit` waiting documents, oldest first, to a new batch `batch`; a writer beside
   * this one skips the rows this one holds, so no document is in two batches.
   */
  async claimBatch(batch: string, limit: number): Promise<number> {
    const claimed = await this.db
      .updateTable('mail_queue')
      .set({ batch, claimed_at: sql<Date>`now()` })
      .where(
        'receipt_number',
        'in',
        this.db
          .selectFrom('mail_queue')
          .select('receipt_number')
          .where('batch', 'is', null)
          .orderBy('queued_at')
          .orderBy('receipt_number')
          .limit(limit)
          .forUpdate()
          .skipLocked(),
      )
      .executeTakeFirst();
    return Number(claimed.numUpdatedRows);
  }

  /**
   * Batches claimed more than `ageSeconds` ago with documents still queued: their workflow may
   * never have started (a crash right after the claim), so the writer starts them again.
   */
  async strandedBatches(ageSeconds: number): Promise<string[]> {
    const rows = await this.db
      .selectFrom('mail_queue')
      .select('batch')
      .distinct()
      .where('batch', 'is not', null)
      .where('claimed_at', '<', sql<Date>`now() - make_interval(secs => ${ageSeconds})`)
      .execute();
    return rows.flatMap((r) => (r.batch === null ? [] : [r.batch]));
  }

  /** A batch's documents still to mail, oldest first. */
  async batchDocuments(batch: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('mail_queue')
      .select('receipt_number')
      .where('batch', '=', batch)
      .orderBy('queued_at')
      .orderBy('receipt_number')
      .execute();
    return rows.map((r) => r.receipt_number);
  }

  /** Documents whose delivery ended (sent, refused, no address): they leave the queue. */
  async dropFromMailQueue(numbers: readonly string[]): Promise<void> {
    if (numbers.length === 0) return;
    await this.db.deleteFrom('mail_queue').where('receipt_number', 'in', numbers).execute();
  }

  /** Queues a document again (an operator's resend); true when it was not queued already. */
  async requeue(number: string): Promise<boolean> {
    const row = await this.db
      .insertInto('mail_queue')
      .values({ receipt_number: number })
      .onConflict((oc) => oc.column('receipt_number').doNothing())
      .returning('receipt_number')
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * A batch whose every attempt is used: what it still holds is recorded failed (a delivery
   * never begun gets its row) and leaves the queue, where `npm run ops -- mail` lists it.
   */
  async failBatch(
    batch: string,
    messageIdOf: (number: string) => string,
    error: string,
  ): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const left = await trx
        .deleteFrom('mail_queue')
        .where('batch', '=', batch)
        .returning('receipt_number')
        .execute();
      if (left.length === 0) return 0;
      await trx
        .insertInto('mail_deliveries')
        .values(
          left.map(({ receipt_number }) => ({
            receipt_number,
            message_id: messageIdOf(receipt_number),
            status: 'failed' as const,
            last_error: error,
          })),
        )
        .onConflict((oc) =>
          oc
            .column('receipt_number')
            .doUpdateSet({
              status: 'failed',
              last_error: error,
              updated_at: sql`now()`,
              held_until: null,
            })
            .where('mail_deliveries.status', '=', 'sending'),
        )
        .execute();
      return left.length;
    });
  }

  /**
   * Starts (or starts again) a document's delivery and holds it for this attempt: `ended` when
   * it was sent already (or has no address), so a retried activity or a reset workflow never
   * sends it twice; `held` while another attempt holds it, so one that outlived its time and
   * the retry beside it never both send it.
   */
  async beginDelivery(number: string, messageId: string): Promise<'begun' | 'ended' | 'held'> {
    const held = sql<Date>`now() + make_interval(secs => ${HOLD_SECONDS})`;
    const row = await this.db
      .insertInto('mail_deliveries')
      .values({
        receipt_number: number,
        message_id: messageId,
        status: 'sending',
        held_until: held,
      })
      .onConflict((oc) =>
        oc
          .column('receipt_number')
          .doUpdateSet({
            status: 'sending',
            attempts: sql`mail_deliveries.attempts + 1`,
            updated_at: sql`now()`,
            held_until: held,
          })
          .where('mail_deliveries.status', 'not in', ['sent', 'no-address'])
          .where((eb) =>
            eb.or([
              eb('mail_deliveries.held_until', 'is', null),
              eb('mail_deliveries.held_until', '<', sql<Date>`now()`),
            ]),
          ),
      )
      .returning('status')
      .executeTakeFirst();
    if (row) return 'begun';
    const current = await this.db
      .selectFrom('mail_deliveries')
      .select('status')
      .where('receipt_number', '=', number)
      .executeTakeFirst();
    return current?.status === 'sent' || current?.status === 'no-address' ? 'ended' : 'held';
  }

  /** An attempt whose send failed lets its delivery go: the next attempt may take it at once. */
  async releaseDelivery(number: string, error: string): Promise<void> {
    await this.db
      .updateTable('mail_deliveries')
      .set({ held_until: null, last_error: error, updated_at: sql`now()` })
      .where('receipt_number', '=', number)
      .where('status', '=', 'sending')
      .execute();
  }

  async endDelivery(
    number: string,
    status: Exclude<MailDeliveryStatus, 'sending'>,
    error?: string,
  ): Promise<void> {
    await this.db
      .updateTable('mail_deliveries')
      .set({
        status,
        last_error: error ?? null,
        updated_at: sql`now()`,
        held_until: null,
        ...(status === 'sent' ? { sent_at: sql<Date>`now()` } : {}),
      })
      .where('receipt_number', '=', number)
      // Only an attempt's own row: a late failure never undoes a send recorded before it.
      .where('status', '=', 'sending')
      .execute();
  }

  /** Deliveries that did not end sent, for the ops CLI and the metrics. */
  async unsent(limit: number) {
    return this.db
      .selectFrom('mail_deliveries')
      .select(['receipt_number', 'status', 'attempts', 'last_error', 'updated_at'])
      .where('status', 'in', ['sending', 'failed'])
      .orderBy('updated_at')
      .limit(limit)
      .execute();
  }
}
