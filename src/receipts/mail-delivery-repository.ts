import { sql } from 'kysely';
import type { Db } from '../db/database';
import type { MailDeliveryStatus } from '../db/schema';

/**
 * A numbered document's e-mail: the queue the numbering fills, and the delivery recorded before
 * and after the SMTP exchange, so a document is sent once. The only SQL about them.
 */
export class MailDeliveryRepository {
  constructor(private readonly db: Db) {}

  /** Documents whose mail workflow is still to start, oldest first. */
  async mailQueue(limit: number): Promise<string[]> {
    const rows = await this.db
      .selectFrom('mail_queue')
      .select('receipt_number')
      .orderBy('queued_at')
      .orderBy('receipt_number')
      .limit(limit)
      .execute();
    return rows.map((r) => r.receipt_number);
  }

  async dropFromMailQueue(numbers: readonly string[]): Promise<void> {
    if (numbers.length === 0) return;
    await this.db.deleteFrom('mail_queue').where('receipt_number', 'in', numbers).execute();
  }

  /**
   * Starts (or starts again) a document's delivery; false when it was sent already, so a
   * retried activity or a reset workflow never sends it twice.
   */
  async beginDelivery(number: string, messageId: string): Promise<boolean> {
    const row = await this.db
      .insertInto('mail_deliveries')
      .values({ receipt_number: number, message_id: messageId, status: 'sending' })
      .onConflict((oc) =>
        oc
          .column('receipt_number')
          .doUpdateSet({
            status: 'sending',
            attempts: sql`mail_deliveries.attempts + 1`,
            updated_at: sql`now()`,
          })
          .where('mail_deliveries.status', 'not in', ['sent', 'no-address']),
      )
      .returning('status')
      .executeTakeFirst();
    return row !== undefined;
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
