import { sql } from 'kysely';
import type { Db } from '../db/database';
import type { CampaignRepair } from '../../workflows/contracts';
import type { Donation } from '../donations/donation';
import type { ReconciliationStats } from '../observability/metrics';

/** A campaign's stored total next to the one its ledger implies, read in one snapshot. */
export interface CampaignDrift {
  campaignId: string;
  stored: { amount: number; count: number; version: number };
  ledger: { amount: number; count: number };
}

/** An open donation past its payment deadline, with what its workflow input is rebuilt from. */
export type OverdueDonation = Pick<
  Donation,
  | 'id'
  | 'clientId'
  | 'campaignId'
  | 'amount'
  | 'currency'
  | 'paymentMethod'
  | 'provider'
  | 'status'
  | 'workflowId'
> & { idempotencyKey: string; createdAt: Date; correlationId: string | null };

export interface ReconciliationRunRecord {
  runId: string;
  workflowId: string;
  campaignsChecked: number;
  driftCampaigns: number;
  repaired: number;
  stuckRestarted: number;
  inboxRedelivered: number;
  bodiesPurged: number;
}

/**
 * All SQL of reconciliation. The totals are recomputed with exactly the arithmetic of
 * DonationRepository.confirm/reverse: the amount is the sum of the signed ledger entries, and
 * the count is the number of donations whose entries still net above zero (a confirmation adds
 * one, only a reversal of everything that remains takes it away again).
 */
export class ReconciliationRepository {
  constructor(private readonly db: Db) {}

  /**
   * Every campaign whose stored total differs from its ledger, and how many were checked. One
   * statement, so the ledger and the totals come from the same snapshot: a confirmation
   * committing meanwhile is seen in both or in neither, never as drift.
   */
  async findDrift(): Promise<{ checked: number; drift: CampaignDrift[] }> {
    const rows = await sql<{
      campaign_id: string;
      confirmed_amount: number;
      donation_count: number;
      version: number;
      ledger_amount: number;
      ledger_count: number;
    }>`
      WITH per_donation AS (
        SELECT campaign_id, donation_id, sum(amount) AS net
        FROM donation_ledger
        GROUP BY campaign_id, donation_id
      ), per_campaign AS (
        SELECT campaign_id,
               sum(net)::bigint AS amount,
               count(*) FILTER (WHERE net > 0)::int AS donations
        FROM per_donation
        GROUP BY campaign_id
      )
      SELECT t.campaign_id, t.confirmed_amount, t.donation_count, t.version,
             coalesce(l.amount, 0)::bigint AS ledger_amount,
             coalesce(l.donations, 0)::int AS ledger_count
      FROM campaign_totals t
      LEFT JOIN per_campaign l USING (campaign_id)
      ORDER BY t.campaign_id
    `.execute(this.db);
    const drift = rows.rows
      .filter((r) => r.confirmed_amount !== r.ledger_amount || r.donation_count !== r.ledger_count)
      .map((r) => ({
        campaignId: r.campaign_id,
        stored: { amount: r.confirmed_amount, count: r.donation_count, version: r.version },
        ledger: { amount: r.ledger_amount, count: r.ledger_count },
      }));
    return { checked: rows.rows.length, drift };
  }

  /**
   * Sets a campaign's total to its ledger and records the repair, in one transaction. The total
   * moves only if its shards, locked, still sum to what was read (version and values): if a
   * confirmation moved them since, nothing is written and the next run looks again. Returns the
   * repair, or undefined when it was skipped.
   */
  async repair(runId: string, drift: CampaignDrift): Promise<CampaignRepair | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const shards = await trx
        .selectFrom('campaign_total_shards')
        .select(['confirmed_amount', 'donation_count', 'version'])
        .where('campaign_id', '=', drift.campaignId)
        .forUpdate()
        .execute();
      const sum = (pick: (s: (typeof shards)[number]) => number) =>
        shards.reduce((total, shard) => total + pick(shard), 0);
      const { stored, ledger } = drift;
      if (
        sum((s) => s.version) !== stored.version ||
        sum((s) => s.confirmed_amount) !== stored.amount ||
        sum((s) => s.donation_count) !== stored.count
      ) {
        return undefined;
      }
      // The difference goes to shard 0: the sum is what readers see.
      await trx
        .insertInto('campaign_total_shards')
        .values({
          campaign_id: drift.campaignId,
          shard: 0,
          confirmed_amount: ledger.amount - stored.amount,
          donation_count: ledger.count - stored.count,
          version: 1,
        })
        .onConflict((oc) =>
          oc.columns(['campaign_id', 'shard']).doUpdateSet({
            confirmed_amount: sql`campaign_total_shards.confirmed_amount + excluded.confirmed_amount`,
            donation_count: sql`campaign_total_shards.donation_count + excluded.donation_count`,
            version: sql`campaign_total_shards.version + 1`,
            updated_at: sql`now()`,
          }),
        )
        .execute();
      const updated = {
        confirmed_amount: ledger.amount,
        donation_count: ledger.count,
        version: stored.version + 1,
      };
      const repair: CampaignRepair = {
        campaignId: drift.campaignId,
        before: drift.stored,
        after: {
          amount: updated.confirmed_amount,
          count: updated.donation_count,
          version: updated.version,
        },
      };
      await trx
        .insertInto('reconciliation_repairs')
        .values({
          run_id: runId,
          campaign_id: repair.campaignId,
          before_amount: repair.before.amount,
          before_count: repair.before.count,
          before_version: repair.before.version,
          after_amount: repair.after.amount,
          after_count: repair.after.count,
          after_version: repair.after.version,
        })
        .execute();
      return repair;
    });
  }

  /** The repairs a run made, including those of an earlier attempt of the same activity. */
  async repairsOf(runId: string): Promise<CampaignRepair[]> {
    const rows = await this.db
      .selectFrom('reconciliation_repairs')
      .selectAll()
      .where('run_id', '=', runId)
      .orderBy('id')
      .execute();
    return rows.map((r) => ({
      campaignId: r.campaign_id,
      before: { amount: r.before_amount, count: r.before_count, version: r.before_version },
      after: { amount: r.after_amount, count: r.after_count, version: r.after_version },
    }));
  }

  /**
   * Open donations created more than `overdueSeconds` ago (their payment deadline plus a grace
   * period) and not dead letters, in pages by id.
   */
  async findOverdue(
    overdueSeconds: number,
    limit: number,
    /** The last id of the previous page: a keyset cursor, exact whatever the clock's precision. */
    afterId?: string,
  ): Promise<OverdueDonation[]> {
    let query = this.db
      .selectFrom('donations')
      .selectAll()
      .where('status', 'in', ['PENDING', 'AWAITING_PAYMENT'])
      .where('dead_lettered_at', 'is', null)
      .where('created_at', '<', sql<Date>`now() - make_interval(secs => ${overdueSeconds})`);
    if (afterId !== undefined) query = query.where('id', '>', afterId);
    const rows = await query.orderBy('id').limit(limit).execute();
    return rows.map((r) => ({
      id: r.id,
      clientId: r.client_id,
      idempotencyKey: r.idempotency_key,
      campaignId: r.campaign_id,
      amount: r.amount,
      currency: r.currency,
      paymentMethod: r.payment_method,
      provider: r.provider,
      status: r.status,
      workflowId: r.workflow_id,
      createdAt: r.created_at,
      correlationId: r.correlation_id,
    }));
  }

  /** Records a finished run once (a retried activity changes nothing). */
  async recordRun(run: ReconciliationRunRecord): Promise<void> {
    await this.db
      .insertInto('reconciliation_runs')
      .values({
        run_id: run.runId,
        workflow_id: run.workflowId,
        campaigns_checked: run.campaignsChecked,
        drift_campaigns: run.driftCampaigns,
        repaired: run.repaired,
        stuck_restarted: run.stuckRestarted,
        inbox_redelivered: run.inboxRedelivered,
        bodies_purged: run.bodiesPurged,
      })
      .onConflict((oc) => oc.column('run_id').doNothing())
      .execute();
  }

  /** What `/metrics` reports about reconciliation, read on each scrape. */
  async stats(): Promise<ReconciliationStats> {
    const repairs = await this.db
      .selectFrom('reconciliation_repairs')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    const last = await this.db
      .selectFrom('reconciliation_runs')
      .select(['drift_campaigns', 'finished_at'])
      .orderBy('finished_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    return {
      repairsTotal: Number(repairs.n),
      lastRun: last && { driftCampaigns: last.drift_campaigns, finishedAt: last.finished_at },
    };
  }
}
