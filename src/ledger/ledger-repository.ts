import { sql } from 'kysely';
import type { RawBuilder, Transaction } from 'kysely';
import type { Db } from '../db/database';
import type { Database } from '../db/schema';
import {
  CLOSED_WITHOUT_MONEY,
  OPEN_STATUSES,
  KEPT_HOLDS,
  isKeptHold,
} from '../../workflows/contracts';
import type { DonationStatus, LedgerEntryType, Posting } from '../../workflows/contracts';
import { entrySign, statusFromNet, undoes } from './ledger-status';
import type { LedgerNet } from './ledger-status';

/** One ledger entry as far as matching it to the provider's record goes. */
export interface PostedEntry {
  entryType: LedgerEntryType;
  externalRef: string;
}

export interface ConfirmResult {
  /** The donation's status after the call. */
  status: DonationStatus;
  /** Whether the donation's money is in the ledger, by this call or an earlier one. */
  credited: boolean;
  /** True only for the one call that wrote the ledger entry and moved the totals. */
  inserted: boolean;
  campaignId: string;
  /** Created → confirmed by Postgres' clock, on the call that inserted (the worker's metric). */
  confirmedAfterSeconds?: number;
}

export type PostRefusal =
  /** Nothing was credited yet: there is no money to reverse (the caller may wait). */
  | 'not-credited'
  /**
   * The entry is larger than the donation, or a give-back would take the net above it: no
   * provider moves such money for this payment.
   */
  | 'out-of-range'
  /** A give-back whose reversal was never posted. */
  | 'nothing-to-undo';

export interface PostResult {
  status: DonationStatus;
  /** How many of the postings were inserted by this call (the others were there already). */
  inserted: number;
  refused: PostRefusal | undefined;
  /** The net is below zero after the call: the provider took more than galang kept. */
  overdrawn: boolean;
  campaignId: string;
}

/**
 * All SQL that moves money. Each entry is inserted once per (donation, type, provider ref) with
 * `ON CONFLICT DO NOTHING RETURNING`; the campaign total and the donation's status move only with
 * an entry that was inserted, in the same transaction, under a lock on the donation's row.
 */
export class LedgerRepository {
  constructor(private readonly db: Db) {}

  /**
   * Credits the donation once. An open donation is confirmed; with `late`, one closed without
   * money (a payment that succeeded after the deadline) is too, unless its late payment held
   * it for review (a closed campaign, a method that cannot be refunded): a reset run of the
   * donation's workflow must not override that hold. Anything else is left alone.
   */
  async confirm(donationId: string, options: { late?: boolean } = {}): Promise<ConfirmResult> {
    const creditable: readonly DonationStatus[] = options.late
      ? [...OPEN_STATUSES, ...CLOSED_WITHOUT_MONEY]
      : OPEN_STATUSES;
    // One statement (one round trip, one implicit transaction) on the path every donation
    // takes: lock the row if it may be credited, insert the entry once, and only with an entry
    // inserted confirm the row and move the campaign's total.
    const { rows } = await sql<{ campaign_id: string; waited: number }>`
      WITH d AS (
        SELECT id, campaign_id, amount, currency FROM donations
        WHERE id = ${donationId} AND status IN (${sql.join(creditable)})
          -- Held by its late payment (markLateForReview's reasons): an operator's, no run's.
          AND NOT (status = 'NEEDS_REVIEW' AND failure_reason LIKE 'late payment %')
        FOR UPDATE
      ), e AS (
        INSERT INTO donation_ledger (donation_id, campaign_id, entry_type, external_ref, amount, currency)
        SELECT id, campaign_id, 'DONATION', '', amount, currency FROM d
        ON CONFLICT (donation_id, entry_type, external_ref) DO NOTHING
        RETURNING donation_id, campaign_id, amount
      ), u AS (
        UPDATE donations
        SET status = 'CONFIRMED', failure_reason = NULL, confirmed_at = now(), updated_at = now()
        FROM e WHERE donations.id = e.donation_id
        RETURNING extract(epoch from now() - donations.created_at)::float8 AS waited
      ), t AS (
        ${moveTotalSql(donationId, sql`SELECT campaign_id, amount, 1 FROM e`)}
      )
      SELECT e.campaign_id, u.waited FROM e, u
    `.execute(this.db);
    const confirmed = rows[0];
    if (confirmed) {
      return {
        status: 'CONFIRMED',
        credited: true,
        inserted: true,
        campaignId: confirmed.campaign_id,
        confirmedAfterSeconds: confirmed.waited,
      };
    }
    const donation = await this.db
      .selectFrom('donations')
      .select(['status', 'campaign_id'])
      .select((eb) =>
        eb
          .exists(
            eb
              .selectFrom('donation_ledger')
              .select('id')
              .whereRef('donation_id', '=', 'donations.id')
              .where('entry_type', '=', 'DONATION')
              .where('external_ref', '=', ''),
          )
          .as('credited'),
      )
      .where('id', '=', donationId)
      .executeTakeFirstOrThrow();
    return {
      status: donation.status,
      credited: Boolean(donation.credited),
      inserted: false,
      campaignId: donation.campaign_id,
    };
  }

  /** The donation's entries by type and provider id, to match against the provider's record. */
  async entriesOf(donationId: string): Promise<PostedEntry[]> {
    const rows = await this.db
      .selectFrom('donation_ledger')
      .select(['entry_type', 'external_ref'])
      .where('donation_id', '=', donationId)
      .execute();
    return rows.map((r) => ({ entryType: r.entry_type, externalRef: r.external_ref }));
  }

  /**
   * Posts the entries of one refund or dispute, in order, each once. The donation's status is
   * derived from the net afterwards, except while one of the {@link KEPT_HOLDS} holds it (an
   * unstated chargeback, a late payment not given back) and no posting has ended it. The
   * campaign's count drops when the net reaches zero and comes back when money does.
   */
  async post(donationId: string, postings: readonly Posting[]): Promise<PostResult> {
    return this.db.transaction().execute(async (trx) => {
      const donation = await lockDonation(trx, donationId);
      let ledger = await netOf(trx, donationId);
      const hold =
        donation.status === 'NEEDS_REVIEW' && isKeptHold(donation.failure_reason)
          ? KEPT_HOLDS[donation.failure_reason]
          : undefined;
      let held = hold !== undefined;
      const status = () => (held ? 'NEEDS_REVIEW' : statusFromNet(donation.amount, ledger));
      const result = (inserted: number, refused?: PostRefusal): PostResult => ({
        status: inserted > 0 ? status() : donation.status,
        inserted,
        refused,
        overdrawn: ledger.net < 0,
        campaignId: donation.campaign_id,
      });
      const credited = await hasEntry(trx, donationId, 'DONATION', '');
      let inserted = 0;
      for (const posting of postings) {
        const signed = entrySign[posting.entryType] * posting.amount;
        const undone = undoes[posting.entryType];
        // A give-back of a reversal never posted moved no money, credited or not.
        if (undone && !(await hasEntry(trx, donationId, undone, posting.externalRef))) {
          return result(inserted, 'nothing-to-undo');
        }
        if (!credited) return result(inserted, 'not-credited');
        const next = ledger.net + signed;
        if (await hasEntry(trx, donationId, posting.entryType, posting.externalRef)) continue;
        // Below zero is recorded: the ledger keeps what the provider moved (a dispute of the
        // whole charge after a partial refund). More than the charge matches no money.
        if (posting.amount > donation.amount || next > donation.amount) {
          return result(inserted, 'out-of-range');
        }
        const entry = await insertEntry(
          trx,
          donation,
          posting.entryType,
          posting.externalRef,
          signed,
        );
        if (!entry) continue;
        const countDelta = ledger.net > 0 && next <= 0 ? -1 : ledger.net <= 0 && next > 0 ? 1 : 0;
        await moveTotal(trx, donationId, donation.campaign_id, signed, countDelta);
        ledger = {
          net: next,
          openChargebacks:
            ledger.openChargebacks +
            (posting.entryType === 'CHARGEBACK' ? 1 : 0) -
            (posting.entryType === 'CHARGEBACK_REVERSAL' ? 1 : 0),
        };
        inserted++;
        if (held && hold?.(posting.entryType, next) === true) held = false;
      }
      if (inserted > 0) {
        const released = !held && hold !== undefined;
        await trx
          .updateTable('donations')
          .set({
            status: status(),
            ...(released && { failure_reason: null }),
            updated_at: sql`now()`,
          })
          .where('id', '=', donationId)
          .execute();
      }
      return result(inserted);
    });
  }

  /** A donation's entries, oldest first (operators, tests, reconciliation). */
  entries(donationId: string) {
    return this.db
      .selectFrom('donation_ledger')
      .select(['entry_type', 'external_ref', 'amount', 'created_at'])
      .where('donation_id', '=', donationId)
      .orderBy('id')
      .execute();
  }
}

type LockedDonation = Awaited<ReturnType<typeof lockDonation>>;

/** Reads the donation under a row lock: its confirmations and reversals run one at a time. */
function lockDonation(trx: Transaction<Database>, id: string) {
  return trx
    .selectFrom('donations')
    .select(['id', 'status', 'failure_reason', 'campaign_id', 'amount', 'currency'])
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirstOrThrow();
}

function insertEntry(
  trx: Transaction<Database>,
  donation: LockedDonation,
  entryType: LedgerEntryType,
  externalRef: string,
  amount: number,
) {
  return trx
    .insertInto('donation_ledger')
    .values({
      donation_id: donation.id,
      campaign_id: donation.campaign_id,
      entry_type: entryType,
      external_ref: externalRef,
      amount,
      currency: donation.currency,
    })
    .onConflict((oc) => oc.columns(['donation_id', 'entry_type', 'external_ref']).doNothing())
    .returning('id')
    .executeTakeFirst();
}

async function hasEntry(
  trx: Transaction<Database>,
  donationId: string,
  entryType: LedgerEntryType,
  externalRef: string,
): Promise<boolean> {
  const row = await trx
    .selectFrom('donation_ledger')
    .select('id')
    .where('donation_id', '=', donationId)
    .where('entry_type', '=', entryType)
    .where('external_ref', '=', externalRef)
    .executeTakeFirst();
  return row !== undefined;
}

async function netOf(trx: Transaction<Database>, donationId: string): Promise<LedgerNet> {
  const row = await trx
    .selectFrom('donation_ledger')
    // SUM(bigint) is numeric; cast back so it arrives as a checked integer.
    .select([
      sql<number>`coalesce(sum(amount), 0)::bigint`.as('net'),
      sql<number>`(count(*) FILTER (WHERE entry_type = 'CHARGEBACK')
        - count(*) FILTER (WHERE entry_type = 'CHARGEBACK_REVERSAL'))::int`.as('open_chargebacks'),
    ])
    .where('donation_id', '=', donationId)
    .executeTakeFirstOrThrow();
  return { net: row.net, openChargebacks: row.open_chargebacks };
}

/**
 * Shards per campaign total: confirmations of one campaign spread over this many rows, each
 * donation always in the same one (its reversals move the shard its credit moved).
 */
export const TOTAL_SHARDS = 16;

/** Adds `(campaign_id, amount, count)` rows from `source` to the donation's total shard. */
function moveTotalSql(donationId: string, source: RawBuilder<unknown>) {
  return sql`
    INSERT INTO campaign_total_shards AS s (campaign_id, shard, confirmed_amount, donation_count, version)
    SELECT x.*, 1 FROM (
      SELECT campaign_id, (abs(hashtext(${donationId})) % ${TOTAL_SHARDS})::smallint, amount, count
      FROM (${source}) AS src (campaign_id, amount, count)
    ) AS x
    ON CONFLICT (campaign_id, shard) DO UPDATE SET
      confirmed_amount = s.confirmed_amount + excluded.confirmed_amount,
      donation_count = s.donation_count + excluded.donation_count,
      version = s.version + 1,
      updated_at = now()
  `;
}

function moveTotal(
  trx: Transaction<Database>,
  donationId: string,
  campaignId: string,
  amount: number,
  countDelta: number,
) {
  return moveTotalSql(
    donationId,
    sql`SELECT ${campaignId}::text, ${amount}::bigint, ${countDelta}::int`,
  ).execute(trx);
}
