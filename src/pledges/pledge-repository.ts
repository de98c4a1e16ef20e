import { sql } from 'kysely';
import type { Selectable } from 'kysely';
import type { Db } from '../db/database';
import type { PledgeStatus, PledgesTable } from '../db/schema';
import type { DonationStatus } from '../../workflows/contracts';
import type { PledgeInterval } from './pledge-calendar';

export interface Pledge {
  id: string;
  clientId: string;
  campaignId: string;
  amount: number;
  currency: string;
  interval: PledgeInterval;
  dayOfPeriod: number;
  timeZone: string;
  paymentMethod: string;
  provider: string;
  donor: { name: string; email: string; anonymous: boolean };
  message: string | null;
  status: PledgeStatus;
  createdAt: Date;
  updatedAt: Date;
}

export type NewPledge = Omit<Pledge, 'status' | 'createdAt' | 'updatedAt'> & {
  idempotencyKey: string;
};

/** A period a pledge charged, with its donation's status now. */
export interface PledgePeriod {
  period: string;
  donationId: string;
  amount: number;
  startedAt: Date;
  status: DonationStatus | null;
}

/** The statuses a pledge may move to each status from: a cancelled pledge stays cancelled. */
const ALLOWED_FROM: Record<PledgeStatus, PledgeStatus[]> = {
  ACTIVE: ['PAUSED'],
  PAUSED: ['ACTIVE'],
  CANCELLED: ['ACTIVE', 'PAUSED'],
};

/** All SQL about pledges and their periods. Inserts are keyed; changes are conditional. */
export class PledgeRepository {
  constructor(private readonly db: Db) {}

  /** Inserts the pledge once (a retried request finds the first), and returns it as stored. */
  async insert(pledge: NewPledge): Promise<Pledge> {
    await this.db
      .insertInto('pledges')
      .values({
        id: pledge.id,
        client_id: pledge.clientId,
        idempotency_key: pledge.idempotencyKey,
        campaign_id: pledge.campaignId,
        amount: pledge.amount,
        currency: pledge.currency,
        frequency: pledge.interval,
        day_of_period: pledge.dayOfPeriod,
        time_zone: pledge.timeZone,
        payment_method: pledge.paymentMethod,
        provider: pledge.provider,
        donor_name: pledge.donor.name,
        donor_email: pledge.donor.email,
        donor_anonymous: pledge.donor.anonymous,
        message: pledge.message,
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
    const stored = await this.find(pledge.id);
    if (!stored) throw new Error(`Pledge ${pledge.id} vanished after insert`);
    return stored;
  }

  async find(id: string): Promise<Pledge | undefined> {
    const row = await this.db
      .selectFrom('pledges')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row && toPledge(row);
  }

  /** Moves the pledge to `status` from a status that allows it; undefined when none did. */
  async setStatus(id: string, status: PledgeStatus): Promise<Pledge | undefined> {
    const row = await this.db
      .updateTable('pledges')
      .set({ status, updated_at: sql`now()` })
      .where('id', '=', id)
      .where('status', 'in', ALLOWED_FROM[status])
      .returningAll()
      .executeTakeFirst();
    return row && toPledge(row);
  }

  /** New amount or method, for the periods not started yet; a cancelled pledge keeps its own. */
  async update(
    id: string,
    change: { amount?: number | undefined; paymentMethod?: string | undefined },
  ): Promise<Pledge | undefined> {
    const row = await this.db
      .updateTable('pledges')
      .set({
        ...(change.amount !== undefined && { amount: change.amount }),
        ...(change.paymentMethod !== undefined && { payment_method: change.paymentMethod }),
        updated_at: sql`now()`,
      })
      .where('id', '=', id)
      .where('status', '<>', 'CANCELLED')
      .returningAll()
      .executeTakeFirst();
    return row && toPledge(row);
  }

  /**
   * Records that `period` charges `donationId`, once: the first action of a period writes the
   * row, every later one (a second fire, a retry, a reset) finds it and gets the same donation.
   */
  async startPeriod(
    pledgeId: string,
    period: string,
    donationId: string,
    amount: number,
  ): Promise<{ donationId: string; amount: number }> {
    await this.db
      .insertInto('pledge_periods')
      .values({ pledge_id: pledgeId, period, donation_id: donationId, amount })
      .onConflict((oc) => oc.columns(['pledge_id', 'period']).doNothing())
      .execute();
    const row = await this.db
      .selectFrom('pledge_periods')
      .select(['donation_id', 'amount'])
      .where('pledge_id', '=', pledgeId)
      .where('period', '=', period)
      .executeTakeFirstOrThrow();
    return { donationId: row.donation_id, amount: row.amount };
  }

  /** The pledge's periods, newest first, with their donations' status. */
  async periods(pledgeId: string, limit = 24): Promise<PledgePeriod[]> {
    const rows = await this.db
      .selectFrom('pledge_periods as p')
      .leftJoin('donations as d', 'd.id', 'p.donation_id')
      .select(['p.period', 'p.donation_id', 'p.amount', 'p.started_at', 'd.status'])
      .where('p.pledge_id', '=', pledgeId)
      .orderBy('p.period', 'desc')
      .limit(limit)
      .execute();
    return rows.map((row) => ({
      period: row.period,
      donationId: row.donation_id,
      amount: row.amount,
      startedAt: row.started_at,
      status: row.status,
    }));
  }

  /** Pledges by status for operators, newest first. */
  async list(status: PledgeStatus | undefined, limit: number): Promise<Pledge[]> {
    let query = this.db.selectFrom('pledges').selectAll();
    if (status !== undefined) query = query.where('status', '=', status);
    const rows = await query.orderBy('created_at', 'desc').limit(limit).execute();
    return rows.map(toPledge);
  }

  /**
   * How many pledges are in each status, and how many active ones whose newest period's
   * donation ended without money (declined, expired, held for review): the metrics.
   */
  async counts(): Promise<Record<PledgeStatus | 'FAILING', number>> {
    const rows = await sql<{ status: PledgeStatus | 'FAILING'; n: number }>`
      SELECT status, count(*)::int AS n FROM pledges GROUP BY status
      UNION ALL
      SELECT 'FAILING', count(*)::int FROM pledges p
        JOIN LATERAL (SELECT donation_id FROM pledge_periods
                       WHERE pledge_id = p.id ORDER BY period DESC LIMIT 1) last ON true
        JOIN donations d ON d.id = last.donation_id
       WHERE p.status = 'ACTIVE' AND d.status IN ('FAILED', 'EXPIRED', 'NEEDS_REVIEW')
    `.execute(this.db);
    const counts = { ACTIVE: 0, PAUSED: 0, CANCELLED: 0, FAILING: 0 };
    for (const row of rows.rows) counts[row.status] = row.n;
    return counts;
  }
}

function toPledge(row: Selectable<PledgesTable>): Pledge {
  return {
    id: row.id,
    clientId: row.client_id,
    campaignId: row.campaign_id,
    amount: row.amount,
    currency: row.currency,
    interval: row.frequency,
    dayOfPeriod: row.day_of_period,
    timeZone: row.time_zone,
    paymentMethod: row.payment_method,
    provider: row.provider,
    donor: { name: row.donor_name, email: row.donor_email, anonymous: row.donor_anonymous },
    message: row.message,
    status: row.status,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
