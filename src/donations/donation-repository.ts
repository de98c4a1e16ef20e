import { sql } from 'kysely';
import type { Selectable, Transaction } from 'kysely';
import type { Db } from '../db/database';
import type { Database, DonationStatus, DonationsTable } from '../db/schema';
import type { PaymentAction } from '../providers/payment-provider';
import { OPEN_STATUSES } from './donation';
import type { Donation, DonationInput, FinalFailureStatus } from './donation';

export type ReversalKind = 'REFUND' | 'CHARGEBACK';

export interface ReversalResult {
  status: DonationStatus;
  /** True only for the one call that wrote the reversing entry and moved the total. */
  reversed: boolean;
  amount: number;
  campaignId: string;
}

export interface ConfirmResult {
  /** The donation's status after the call. */
  status: DonationStatus;
  /** True only for the one call that wrote the ledger entry and moved the totals. */
  credited: boolean;
  campaignId: string;
}

/**
 * All SQL about donations and their ledger. Every write is idempotent: inserts are
 * `ON CONFLICT DO NOTHING`, status changes are conditional on the current status, and the
 * campaign total moves only with a ledger row that was actually inserted.
 */
export class DonationRepository {
  constructor(private readonly db: Db) {}

  /** Inserts the donation once; a re-run (retry, reset, second edge) is a no-op. */
  async insert(input: DonationInput): Promise<boolean> {
    const row = await this.db
      .insertInto('donations')
      .values({
        id: input.donationId,
        client_id: input.clientId,
        idempotency_key: input.idempotencyKey,
        campaign_id: input.campaignId,
        amount: input.amount,
        currency: input.currency,
        donor_name: input.donor.name,
        donor_email: input.donor.email,
        donor_anonymous: input.donor.anonymous,
        message: input.message ?? null,
        payment_method: input.paymentMethod,
        provider: input.provider,
        workflow_id: input.workflowId,
        // Histories recorded before the edge passed one carry no correlation id.
        correlation_id: (input.correlationId as string | undefined) ?? null,
      })
      .onConflict((oc) => oc.doNothing())
      .returning('id')
      .executeTakeFirst();
    return row !== undefined;
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
   * Confirms the donation and credits its campaign in one transaction. The donation row is
   * locked first, so concurrent confirmations queue; the ledger's UNIQUE(donation_id,
   * entry_type) decides which one credits, and only that one moves the total.
   */
  async confirm(id: string): Promise<ConfirmResult> {
    return this.db.transaction().execute(async (trx) => {
      const donation = await lockForMoney(trx, id);
      let status = donation.status;
      if ((OPEN_STATUSES as readonly string[]).includes(status)) {
        await trx
          .updateTable('donations')
          .set({ status: 'CONFIRMED', confirmed_at: sql`now()`, updated_at: sql`now()` })
          .where('id', '=', id)
          .execute();
        status = 'CONFIRMED';
      }
      if (status !== 'CONFIRMED') {
        return { status, credited: false, campaignId: donation.campaign_id };
      }
      const entry = await trx
        .insertInto('donation_ledger')
        .values({
          donation_id: id,
          campaign_id: donation.campaign_id,
          entry_type: 'DONATION',
          amount: donation.amount,
          currency: donation.currency,
        })
        .onConflict((oc) => oc.columns(['donation_id', 'entry_type']).doNothing())
        .returning('id')
        .executeTakeFirst();
      if (entry) {
        await trx
          .updateTable('campaign_totals')
          .set({
            confirmed_amount: sql`confirmed_amount + ${donation.amount}`,
            donation_count: sql`donation_count + 1`,
            version: sql`version + 1`,
            updated_at: sql`now()`,
          })
          .where('campaign_id', '=', donation.campaign_id)
          .execute();
      }
      return { status, credited: entry !== undefined, campaignId: donation.campaign_id };
    });
  }

  /**
   * Reverses a confirmed donation's money: a refund (full or partial) or a chargeback. One
   * transaction locks the donation, inserts the reversing ledger entry of this type once
   * (`ON CONFLICT DO NOTHING RETURNING`), and moves the status and the total only when that
   * entry was inserted. A full reversal also takes the donation out of the campaign's count.
   */
  async reverse(id: string, kind: ReversalKind, requested: number): Promise<ReversalResult> {
    return this.db.transaction().execute(async (trx) => {
      const donation = await lockForMoney(trx, id);
      const unchanged: ReversalResult = {
        status: donation.status,
        reversed: false,
        amount: 0,
        campaignId: donation.campaign_id,
      };
      const reversible: DonationStatus[] = ['CONFIRMED', 'PARTIALLY_REFUNDED'];
      if (!reversible.includes(donation.status)) {
        return unchanged;
      }
      const already = await trx
        .selectFrom('donation_ledger')
        // SUM(bigint) is numeric; cast back so it arrives as a checked integer.
        .select(sql<number>`coalesce(sum(amount), 0)::bigint`.as('net'))
        .where('donation_id', '=', id)
        .executeTakeFirstOrThrow();
      const remaining = already.net;
      const amount = Math.min(requested, remaining);
      if (amount <= 0) {
        return unchanged;
      }
      const entry = await trx
        .insertInto('donation_ledger')
        .values({
          donation_id: id,
          campaign_id: donation.campaign_id,
          entry_type: kind,
          amount: -amount,
          currency: donation.currency,
        })
        .onConflict((oc) => oc.columns(['donation_id', 'entry_type']).doNothing())
        .returning('id')
        .executeTakeFirst();
      if (!entry) {
        return unchanged;
      }
      const full = amount === remaining;
      const status: DonationStatus =
        kind === 'CHARGEBACK' ? 'CHARGED_BACK' : full ? 'REFUNDED' : 'PARTIALLY_REFUNDED';
      await trx
        .updateTable('donations')
        .set({ status, updated_at: sql`now()` })
        .where('id', '=', id)
        .execute();
      await trx
        .updateTable('campaign_totals')
        .set({
          confirmed_amount: sql`confirmed_amount - ${amount}`,
          donation_count: full ? sql`donation_count - 1` : sql`donation_count`,
          version: sql`version + 1`,
          updated_at: sql`now()`,
        })
        .where('campaign_id', '=', donation.campaign_id)
        .execute();
      return { status, reversed: true, amount, campaignId: donation.campaign_id };
    });
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
}

/**
 * Reads what moving a donation's money needs and locks its row until the transaction ends, so
 * concurrent confirmations and reversals of one donation run one after the other.
 */
function lockForMoney(trx: Transaction<Database>, id: string) {
  return trx
    .selectFrom('donations')
    .select(['status', 'campaign_id', 'amount', 'currency'])
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirstOrThrow();
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
    confirmedAt: row.confirmed_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
