import type { Db } from '../db/database';
import type { CampaignStatus } from '../db/schema';

export interface Campaign {
  id: string;
  title: string;
  goalAmount: number;
  currency: string;
  status: CampaignStatus;
  endsAt: Date | null;
}

export interface CampaignProgress extends Campaign {
  /** The donor wall shows no amounts. */
  hideAmounts: boolean;
  confirmedAmount: number;
  donationCount: number;
  version: number;
  updatedAt: Date;
}

export interface NewCampaign {
  id: string;
  title: string;
  goalAmount: number;
  currency: string;
  endsAt?: Date | null;
  hideAmounts?: boolean;
}

/** All SQL about campaigns and their totals. */
export class CampaignRepository {
  constructor(private readonly db: Db) {}

  async findById(id: string): Promise<Campaign | undefined> {
    const row = await this.db
      .selectFrom('campaigns')
      .select(['id', 'title', 'goal_amount', 'currency', 'status', 'ends_at'])
      .where('id', '=', id)
      .executeTakeFirst();
    return row && toCampaign(row);
  }

  async progress(id: string): Promise<CampaignProgress | undefined> {
    const row = await this.db
      .selectFrom('campaigns as c')
      .innerJoin('campaign_totals as t', 't.campaign_id', 'c.id')
      .select([
        'c.id',
        'c.title',
        'c.goal_amount',
        'c.currency',
        'c.status',
        'c.ends_at',
        'c.hide_amounts',
        't.confirmed_amount',
        't.donation_count',
        't.version',
        't.updated_at',
      ])
      .where('c.id', '=', id)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      ...toCampaign(row),
      hideAmounts: row.hide_amounts,
      confirmedAmount: row.confirmed_amount,
      donationCount: row.donation_count,
      version: row.version,
      updatedAt: row.updated_at,
    };
  }

  /**
   * Closes an open campaign. Conditional, so closing twice changes nothing the second time;
   * donations already recorded still settle, new ones are refused (see `acceptsDonations`).
   */
  async close(id: string): Promise<boolean> {
    const closed = await this.db
      .updateTable('campaigns')
      .set({ status: 'CLOSED', updated_at: new Date() })
      .where('id', '=', id)
      .where('status', '=', 'OPEN')
      .returning('id')
      .executeTakeFirst();
    return closed !== undefined;
  }

  /** Creates a campaign and its zero totals once; a repeat is a no-op. Returns whether it was new. */
  async create(campaign: NewCampaign): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const inserted = await trx
        .insertInto('campaigns')
        .values({
          id: campaign.id,
          title: campaign.title,
          goal_amount: campaign.goalAmount,
          currency: campaign.currency,
          ends_at: campaign.endsAt ?? null,
          hide_amounts: campaign.hideAmounts ?? false,
        })
        .onConflict((oc) => oc.column('id').doNothing())
        .returning('id')
        .executeTakeFirst();
      if (!inserted) return false;
      await trx
        .insertInto('campaign_total_shards')
        .values({ campaign_id: campaign.id, shard: 0 })
        .execute();
      return true;
    });
  }
}

/** A campaigns row as the domain sees it (also read beside a donation's insert). */
export function toCampaign(row: {
  id: string;
  title: string;
  goal_amount: number;
  currency: string;
  status: CampaignStatus;
  ends_at: Date | null;
}): Campaign {
  return {
    id: row.id,
    title: row.title,
    goalAmount: row.goal_amount,
    currency: row.currency,
    status: row.status,
    endsAt: row.ends_at,
  };
}

/** Whether a campaign takes donations at this instant. */
export function acceptsDonations(campaign: Campaign, now: Date): boolean {
  return campaign.status === 'OPEN' && (campaign.endsAt === null || campaign.endsAt > now);
}
