import { sql } from 'kysely';
import type { Selectable } from 'kysely';
import type { Db } from '../db/database';
import type { DonationsTable } from '../db/schema';
import type { DonationStatus, PaymentAction } from '../../workflows/contracts';
import { CLOSED_WITHOUT_MONEY, OPEN_STATUSES } from '../../workflows/contracts';
import type { DonationInput, FinalFailureStatus } from '../../workflows/contracts';
import type { Donation } from './donation';
import { ANONYMOUS_NAME } from './public-name';
import { toCampaign } from '../campaigns/campaign-repository';
import type { Campaign } from '../campaigns/campaign-repository';

/**
 * All SQL about donation rows (the ledger's is in src/ledger/). Every write is idempotent:
 * inserts are `ON CONFLICT DO NOTHING`, status changes are conditional on the current status.
 */
export class DonationRepository {
  constructor(private readonly db: Db) {}

  /**
   * Inserts the donation once; a re-run (retry, reset, second edge) is a no-op. The row holds
   * what the donation is, not how its workflow treats the provider. The donor's data moves in
   * from `donor_details`, where the edge put it (none: an anonymous donor without an address).
   * The call that inserted also reads the campaign it checks the donation against, in the same
   * statement.
   */
  async insert(
    input: Omit<DonationInput, 'verifyWithProvider' | 'settleHorizonSeconds'>,
  ): Promise<{ inserted: false } | { inserted: true; campaign: Campaign | undefined }> {
    const row = await this.db
      .with('details', (db) =>
        db.deleteFrom('donor_details').where('donation_id', '=', input.donationId).returningAll(),
      )
      .with('inserted', (db) =>
        db
          .insertInto('donations')
          .values({
            id: input.donationId,
            client_id: input.clientId,
            idempotency_key: input.idempotencyKey,
            campaign_id: input.campaignId,
            amount: input.amount,
            currency: input.currency,
            donor_name: sql<string>`coalesce((SELECT donor_name FROM details), '')`,
            donor_email: sql<string>`coalesce((SELECT donor_email FROM details), '')`,
            donor_anonymous: sql<boolean>`coalesce((SELECT donor_anonymous FROM details), true)`,
            public_name: sql<string>`coalesce(
              (SELECT CASE WHEN donor_anonymous THEN ${ANONYMOUS_NAME} ELSE donor_name END
                 FROM details),
              ${ANONYMOUS_NAME})`,
            message: sql<string | null>`(SELECT message FROM details)`,
            payment_method: input.paymentMethod,
            provider: input.provider,
            workflow_id: input.workflowId,
            // Histories recorded before the edge passed one carry no correlation id.
            correlation_id: (input.correlationId as string | undefined) ?? null,
          })
          .onConflict((oc) => oc.doNothing())
          .returning('campaign_id'),
      )
      .selectFrom('inserted')
      .leftJoin('campaigns as c', 'c.id', 'inserted.campaign_id')
      .select(['c.id', 'c.title', 'c.goal_amount', 'c.currency', 'c.status', 'c.ends_at'])
      .executeTakeFirst();
    if (!row) return { inserted: false };
    const { id, title, goal_amount, currency, status, ends_at } = row;
    const campaign =
      id === null || title === null || goal_amount === null || currency === null || status === null
        ? undefined
        : toCampaign({ id, title, goal_amount, currency, status, ends_at });
    return { inserted: true, campaign };
  }

  async findById(id: string): Promise<Donation | undefined> {
    const row = await this.db
      .selectFrom('donations')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row && toDonation(row);
  }

  /** PENDING → AWAITING_PAYMENT with the provider's reference; a repeat changes nothing. */
  async markAwaitingPayment(
    id: string,
    providerReference: string,
    action: PaymentAction,
  ): Promise<void> {
    await this.db
      .updateTable('donations')
      .set({
        status: 'AWAITING_PAYMENT',
        provider_reference: providerReference,
        payment_action: JSON.stringify(action),
        updated_at: sql`now()`,
      })
      .where('id', '=', id)
      .where('status', '=', 'PENDING')
      .execute();
  }

  /**
   * A saved method's charge the issuer declined: the row names the declined payment (its
   * notifications then bind to it) and ends FAILED in the same statement.
   */
  async markDeclined(id: string, providerReference: string): Promise<void> {
    await this.db
      .updateTable('donations')
      .set({
        status: 'FAILED',
        provider_reference: providerReference,
        failure_reason: 'payment-declined',
        updated_at: sql`now()`,
      })
      .where('id', '=', id)
      .where('status', '=', 'PENDING')
      .execute();
  }

  /** Ends an open donation without money; a donation already past that point is left alone. */
  async markFailed(
    id: string,
    status: FinalFailureStatus,
    reason: string,
  ): Promise<DonationStatus> {
    const updated = await this.db
      .updateTable('donations')
      .set({ status, failure_reason: reason, updated_at: sql`now()` })
      .where('id', '=', id)
      .where('status', 'in', OPEN_STATUSES)
      .returning('status')
      .executeTakeFirst();
    if (updated) return updated.status;
    const current = await this.findById(id);
    if (!current) throw new Error(`Donation ${id} does not exist`);
    return current.status;
  }

  /**
   * Sends a donation closed without money to review: a payment arrived for it after it closed,
   * but not of the amount it asked for. Credited donations are left alone.
   */
  async markLateForReview(id: string, reason: string): Promise<DonationStatus | undefined> {
    const updated = await this.db
      .updateTable('donations')
      .set({ status: 'NEEDS_REVIEW', failure_reason: reason, updated_at: sql`now()` })
      .where('id', '=', id)
      .where('status', 'in', ['EXPIRED', 'CANCELED', 'FAILED'])
      .where('confirmed_at', 'is', null)
      .returning('status')
      .executeTakeFirst();
    return updated?.status;
  }

  /** Sends a credited donation to review; one not credited yet is left alone. */
  async markCreditedForReview(id: string, reason: string): Promise<boolean> {
    const updated = await this.db
      .updateTable('donations')
      .set({ status: 'NEEDS_REVIEW', failure_reason: reason, updated_at: sql`now()` })
      .where('id', '=', id)
      .where('confirmed_at', 'is not', null)
      .returning('id')
      .executeTakeFirst();
    return updated !== undefined;
  }

  /**
   * Sends a credited donation that still holds money (`CONFIRMED`, `PARTIALLY_REFUNDED`) to
   * review: a late payment whose refund failed. A refunded, disputed or held one is left alone.
   */
  async markKeptMoneyForReview(id: string, reason: string): Promise<boolean> {
    const updated = await this.db
      .updateTable('donations')
      .set({ status: 'NEEDS_REVIEW', failure_reason: reason, updated_at: sql`now()` })
      .where('id', '=', id)
      .where('confirmed_at', 'is not', null)
      .where('status', 'in', ['CONFIRMED', 'PARTIALLY_REFUNDED'])
      .returning('id')
      .executeTakeFirst();
    return updated !== undefined;
  }

  /**
   * A page (after `afterId`, by id) of the donations created within `windowDays` whose money can
   * still move at their provider: credited ones (refunds, disputes) and those never credited but
   * closed or dead-lettered (a late payment). Reconciliation reads each one's provider record.
   */
  async findMoneyThatCanMove(
    windowDays: number,
    limit: number,
    afterId?: string,
  ): Promise<Donation[]> {
    let query = this.db
      .selectFrom('donations')
      .selectAll()
      .where('provider_reference', 'is not', null)
      .where('created_at', '>=', sql<Date>`now() - make_interval(days => ${windowDays})`)
      .where((eb) =>
        eb.or([
          eb('confirmed_at', 'is not', null),
          eb('status', 'in', CLOSED_WITHOUT_MONEY),
          eb('dead_lettered_at', 'is not', null),
        ]),
      );
    if (afterId !== undefined) query = query.where('id', '>', afterId);
    const rows = await query.orderBy('id').limit(limit).execute();
    return rows.map(toDonation);
  }

  /** How many donations are still open (not yet decided), by their provider. */
  async countOpenByProvider(): Promise<Map<string, number>> {
    const rows = await this.db
      .selectFrom('donations')
      .select((eb) => ['provider', eb.fn.countAll<string>().as('open')])
      .where('status', 'in', OPEN_STATUSES)
      .groupBy('provider')
      .execute();
    return new Map(rows.map((row) => [row.provider, Number(row.open)]));
  }

  /** Marks a donation reconciliation will no longer hand back; the first mark stays. */
  async markDeadLetter(id: string, reason: string): Promise<void> {
    await this.db
      .updateTable('donations')
      .set({ dead_lettered_at: sql`now()`, dead_letter_reason: reason })
      .where('id', '=', id)
      .where('dead_lettered_at', 'is', null)
      .execute();
  }
}

function toDonation(row: Selectable<DonationsTable>): Donation {
  return {
    id: row.id,
    clientId: row.client_id,
    campaignId: row.campaign_id,
    amount: row.amount,
    currency: row.currency,
    donor: { name: row.donor_name, email: row.donor_email, anonymous: row.donor_anonymous },
    message: row.message,
    paymentMethod: row.payment_method,
    status: row.status,
    provider: row.provider,
    providerReference: row.provider_reference,
    paymentAction: (row.payment_action as PaymentAction | null) ?? null,
    workflowId: row.workflow_id,
    failureReason: row.failure_reason,
    deadLetteredAt: row.dead_lettered_at,
    deadLetterReason: row.dead_letter_reason,
    confirmedAt: row.confirmed_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
