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
   * Written before the workflow starts; a retry of the same key writes nothing again (the body
   * is the same: the idempotency layer refused any other), nor once the donation is recorded.
   */
  async save(donationId: string, details: DonorDetails): Promise<void> {
    const { donor, message } = details;
    await sql`
      INSERT INTO donor_details (donation_id, donor_name, donor_email, donor_anonymous, message)
      SELECT ${donationId}, ${donor.name}, ${donor.email}, ${donor.anonymous}, ${message ?? null}
       WHERE NOT EXISTS (SELECT 1 FROM donations WHERE id = ${donationId})
      ON CONFLICT (donation_id) DO NOTHING
    `.execute(this.db);
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
