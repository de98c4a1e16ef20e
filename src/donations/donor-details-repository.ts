import { sql } from 'kysely';
import type { Db } from '../db/database';
import type { DonationRequest } from '../../workflows/contracts';

/** A donor's own data as the edge took it: what the workflow's input leaves out. */
export type DonorDetails = Pick<DonationRequest, 'donor' | 'message'>;

/**
 * The donor's data between the edge's accept and the donation's record, which moves it into
 * `donations` (DonationRepository.insert). Kept out of the workflow's input, so Temporal's
 * histories never hold it and an erasure reaches every copy with SQL.
 */
export class DonorDetailsRepository {
  constructor(private readonly db: Db) {}

  /**
   * Written before the workflow starts; a retry of the same key writes no field again (the body
   * is the same: the idempotency layer refused any other), nor anything once the donation is
   * recorded. It renews `created_at`, so a retry keeps the row from {@link purgeOrphans}.
   * True when the donation was not recorded yet: a record seen later was made after this call.
   */
  async save(donationId: string, details: DonorDetails): Promise<boolean> {
    const { donor, message } = details;
    const { rows } = await sql<{ donation_id: string }>`
      INSERT INTO donor_details (donation_id, donor_name, donor_email, donor_anonymous, message)
      SELECT ${donationId}, ${donor.name}, ${donor.email}, ${donor.anonymous}, ${message ?? null}
       WHERE NOT EXISTS (SELECT 1 FROM donations WHERE id = ${donationId})
      ON CONFLICT (donation_id) DO UPDATE SET created_at = now()
      RETURNING donation_id
    `.execute(this.db);
    return rows.length > 0;
  }

  /**
   * Deletes, up to `limit`, the rows of accepts older than `hours` whose donation was never
   * recorded: a start that failed (the client got a 503) and was not retried. The record step
   * moves a row within seconds, so one this old has no workflow coming for it.
   */
  async purgeOrphans(hours: number, limit: number): Promise<number> {
    const { rows } = await sql<{ donation_id: string }>`
      DELETE FROM donor_details t
       WHERE t.donation_id IN (
               SELECT d.donation_id FROM donor_details d
                WHERE d.created_at < now() - make_interval(hours => ${hours})
                  AND NOT EXISTS (SELECT 1 FROM donations WHERE id = d.donation_id)
                ORDER BY d.created_at
                LIMIT ${limit})
         -- Checked again on the row itself: a retry's save that renewed it meanwhile keeps it.
         AND t.created_at < now() - make_interval(hours => ${hours})
      RETURNING t.donation_id
    `.execute(this.db);
    return rows.length;
  }

  /** How many rows {@link purgeOrphans} would delete now: what a reconciliation dry run shows. */
  async countOrphans(hours: number): Promise<number> {
    const { rows } = await sql<{ count: number }>`
      SELECT count(*)::int AS count FROM donor_details d
       WHERE d.created_at < now() - make_interval(hours => ${hours})
         AND NOT EXISTS (SELECT 1 FROM donations WHERE id = d.donation_id)
    `.execute(this.db);
    return rows[0]?.count ?? 0;
  }

  /** The donor of a donation not yet recorded, as the edge took it. */
  async find(donationId: string): Promise<DonorDetails | undefined> {
    const row = await this.db
      .selectFrom('donor_details')
      .select(['donor_name', 'donor_email', 'donor_anonymous', 'message'])
      .where('donation_id', '=', donationId)
      .executeTakeFirst();
    return (
      row && {
        donor: { name: row.donor_name, email: row.donor_email, anonymous: row.donor_anonymous },
        message: row.message ?? undefined,
      }
    );
  }
}
