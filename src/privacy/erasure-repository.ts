import { sql } from 'kysely';
import type { Db } from '../db/database';
import { ANONYMOUS_NAME, ERASED_NAME } from '../donations/public-name';

/** Whose data to erase: a donor by e-mail, or the donor of one donation. */
export type ErasureTarget = { email: string } | { donationId: string };

/**
 * What an erasure changed: the donor's donations, their campaigns, the bodies it purged, and
 * the donor's pledges, cancelled (no period can be charged or receipted without an address).
 */
export interface ErasureResult {
  donationIds: string[];
  campaignIds: string[];
  bodiesPurged: number;
  pledgeIds: string[];
}

/**
 * All SQL of a donor's erasure, in one transaction: the donor's fields in `donations` become a
 * pseudonym (name "Erased donor", no e-mail, no message, "Anonymous" on the wall), the edge's
 * copy in `donor_details` is deleted, the donor's pledges get the pseudonym, are cancelled and
 * forget their kept card, and the raw bodies of the donor's webhooks are purged, as retention
 * purges them. Amounts, dates, campaigns, ledger entries and receipt numbers stay: the law
 * makes a charity keep them, and the totals must not move.
 */
export class ErasureRepository {
  constructor(private readonly db: Db) {}

  async erase(target: ErasureTarget): Promise<ErasureResult> {
    const result = await this.db.transaction().execute(async (trx) => {
      // By a donation: its donor's address finds the rest of their donations.
      const email = 'email' in target ? target.email : await this.emailOf(trx, target.donationId);
      const donationId = 'donationId' in target ? target.donationId : undefined;
      // The donor's rows: by address (an erased row has none left), and the one named.
      const byAddress = (column: string) =>
        email ? sql<boolean>`lower(${sql.ref(column)}) = lower(${email})` : sql<boolean>`false`;
      const theDonors = (emailColumn: string, idColumn: string) =>
        donationId === undefined
          ? byAddress(emailColumn)
          : sql<boolean>`(${byAddress(emailColumn)} OR ${sql.ref(idColumn)} = ${donationId})`;
      const erased = await trx
        .updateTable('donations')
        .set({
          donor_name: ERASED_NAME,
          donor_email: '',
          message: null,
          public_name: ANONYMOUS_NAME,
          erased_at: sql`coalesce(erased_at, now())`,
        })
        .where(theDonors('donor_email', 'id'))
        .returning(['id', 'campaign_id'])
        .execute();
      const pending = await trx
        .deleteFrom('donor_details')
        .where(theDonors('donor_email', 'donation_id'))
        .returning('donation_id')
        .execute();
      const pledges = await trx
        .updateTable('pledges')
        .set({
          donor_name: ERASED_NAME,
          donor_email: '',
          message: null,
          status: 'CANCELLED',
          // The reference to the donor's card at the provider goes with them.
          saved_method: null,
          erased_at: sql`coalesce(erased_at, now())`,
          updated_at: sql`now()`,
        })
        .where(byAddress('donor_email'))
        .where('erased_at', 'is', null)
        .returning('id')
        .execute();
      const donationIds = [
        ...new Set([...erased.map((row) => row.id), ...pending.map((row) => row.donation_id)]),
      ];
      const purged =
        donationIds.length === 0
          ? []
          : await trx
              .updateTable('webhook_inbox')
              .set({ raw_body: null, body_purged_at: sql`now()` })
              .where('donation_id', 'in', donationIds)
              .where('raw_body', 'is not', null)
              .returning('id')
              .execute();
      return {
        donationIds,
        campaignIds: [...new Set(erased.map((row) => row.campaign_id))],
        bodiesPurged: purged.length,
        pledgeIds: pledges.map((row) => row.id),
      };
    });
    // The planner's statistics sample values (an address given twice is a "most common
    // value" in pg_statistic); sampling again drops the erased ones.
    if (result.donationIds.length + result.pledgeIds.length > 0) {
      await sql`ANALYZE donations, donor_details, pledges`.execute(this.db);
    }
    return result;
  }

  private async emailOf(trx: Db, donationId: string): Promise<string | undefined> {
    const row = await trx
      .selectFrom('donations')
      .select('donor_email')
      .where('id', '=', donationId)
      .unionAll(
        trx.selectFrom('donor_details').select('donor_email').where('donation_id', '=', donationId),
      )
      .executeTakeFirst();
    return row?.donor_email;
  }
}
