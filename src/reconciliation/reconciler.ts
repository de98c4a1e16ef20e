import type { ProgressCache } from '../campaigns/progress-cache';
import type { DonorDetailsRepository } from '../donations/donor-details-repository';
import type { DeliveryLog, WebhookDelivery } from '../webhooks/webhook-delivery';
import { forEachPage } from '../webhooks/webhook-inbox-repository';
import type { InboxEntry, WebhookInboxRepository } from '../webhooks/webhook-inbox-repository';
import type { CampaignDrift, ReconciliationRepository } from './reconciliation-repository';
import { sweepProviderTruth } from './provider-sweep';
import type { ProviderSweepDeps } from './provider-sweep';
import type { StuckDonations } from './stuck-donations';
import type {
  PersonalDataPurged,
  ProviderSweepResult,
  ReconciliationReport,
  StuckDecision,
  TotalsResult,
} from '../../workflows/contracts';

export interface ReconcilerDeps {
  repository: ReconciliationRepository;
  progressCache: ProgressCache;
  delivery: WebhookDelivery;
  inbox: WebhookInboxRepository;
  stuck: StuckDonations;
  /** Undelivered webhooks younger than this are left to the API's own redelivery loop. */
  graceSeconds: number;
  providerSweep: ProviderSweepDeps;
  /** Raw webhook bodies older than this many days are purged (WEBHOOK_BODY_RETENTION_DAYS). */
  bodyRetentionDays: number;
  /** The donor's data of accepts whose donation was never recorded: purged after a week. */
  donorDetails: DonorDetailsRepository;
}

/** What a dry run shows: everything a run would touch, computed without changing anything. */
export interface ReconciliationPlan {
  campaignsChecked: number;
  drift: CampaignDrift[];
  stuck: StuckDecision[];
  inbox: InboxEntry[];
  /** Raw webhook bodies past their retention, which a run would purge (a run takes a bounded share). */
  bodiesToPurge: number;
  /** Donor details of starts that never happened, which a run would delete. */
  donorDetailsToPurge: number;
}

const INBOX_LIMIT = 100;
/** Raw bodies purged per statement, and statements per run: a backlog takes several runs. */
const PURGE_PAGE = 500;
const PURGE_PAGES_PER_RUN = 20;
/**
 * A donor's details wait in `donor_details` from the accept until the record step: seconds, or
 * as long as a worker outage lasts. A row a week old belongs to a start that failed and was
 * never retried (a retry renews it); a week outlasts any outage the donation would survive.
 */
const ORPHAN_DONOR_DETAILS_HOURS = 7 * 24;

/**
 * The three checks behind the reconciliation workflow, each safe to re-run: campaign totals
 * against the ledger, open donations nobody is deciding, webhooks nobody delivered.
 */
export class Reconciler {
  constructor(private readonly deps: ReconcilerDeps) {}

  async plan(): Promise<ReconciliationPlan> {
    const { checked, drift } = await this.deps.repository.findDrift();
    return {
      campaignsChecked: checked,
      drift,
      stuck: await this.deps.stuck.plan(),
      inbox: await this.deps.delivery.pending(INBOX_LIMIT, {
        olderThanMs: this.deps.graceSeconds * 1000,
      }),
      bodiesToPurge: await this.deps.inbox.countPurgeable(this.deps.bodyRetentionDays),
      donorDetailsToPurge: await this.deps.donorDetails.countOrphans(ORPHAN_DONOR_DETAILS_HOURS),
    };
  }

  /**
   * Repairs every drifted total (one transaction each, conditional on the row read) and evicts
   * the repaired campaigns' cached progress. The repairs returned are all those recorded under
   * this run, so a retried activity still reports what its first attempt repaired.
   */
  async repairTotals(runId: string): Promise<TotalsResult> {
    const { checked, drift } = await this.deps.repository.findDrift();
    const skipped: string[] = [];
    for (const campaign of drift) {
      const repair = await this.deps.repository.repair(runId, campaign);
      if (!repair) {
        skipped.push(campaign.campaignId);
        continue;
      }
      // Best effort: the cache's TTL bounds how long a stale total can be served.
      await this.deps.progressCache.invalidate(campaign.campaignId).catch(() => undefined);
    }
    const repaired = await this.deps.repository.repairsOf(runId);
    return { campaignsChecked: checked, driftCampaigns: drift.length, repaired, skipped };
  }

  /**
   * Hands back open donations nobody decides, and hands late payments nobody applied (a PAID
   * whose delivery raced its donation's end) to their late-payment workflow.
   */
  async handBackStuck(runId: string): Promise<StuckDecision[]> {
    const decisions = await this.deps.stuck.handBack(runId);
    const olderThanMs = this.deps.graceSeconds * 1000;
    await forEachPage(
      INBOX_LIMIT,
      (after) => this.deps.inbox.findUnappliedPayments(INBOX_LIMIT, olderThanMs, after),
      async (entry) => {
        const workflowId = await this.deps.delivery.applyLatePayment(entry);
        if (!workflowId || !entry.donationId) return;
        decisions.push({
          donationId: entry.donationId,
          workflowId,
          status: 'closed',
          workflow: 'late-payment',
          action: 'late-payment',
          reason: `unapplied ${entry.eventKey}`,
        });
      },
    );
    return decisions;
  }

  redeliverInbox(log: DeliveryLog): Promise<number> {
    return this.deps.delivery.redeliver(log, INBOX_LIMIT, {
      olderThanMs: this.deps.graceSeconds * 1000,
    });
  }

  /**
   * Drops personal data past its retention, oldest first, a page at a time and at most
   * {@link PURGE_PAGES_PER_RUN} pages of each a run: the payer data of raw webhook bodies (the
   * parsed events stay) and the donor details of starts that never happened.
   */
  async purgeExpiredPersonalData(): Promise<PersonalDataPurged> {
    const { inbox, donorDetails, bodyRetentionDays } = this.deps;
    return {
      bodiesPurged: await purgeInPages(() => inbox.purgeBodies(bodyRetentionDays, PURGE_PAGE)),
      donorDetailsPurged: await purgeInPages(() =>
        donorDetails.purgeOrphans(ORPHAN_DONOR_DETAILS_HOURS, PURGE_PAGE),
      ),
    };
  }

  recordRun(report: ReconciliationReport): Promise<void> {
    return this.deps.repository.recordRun({
      runId: report.runId,
      workflowId: report.workflowId,
      campaignsChecked: report.campaignsChecked,
      driftCampaigns: report.driftCampaigns,
      repaired: report.repaired.length,
      stuckRestarted: report.stuckRestarted.length,
      inboxRedelivered: report.inboxRedelivered,
      bodiesPurged: report.bodiesPurged,
    });
  }

  /** Reads the providers' records of money that can still move (see provider-sweep.ts). */
  async sweepProviders(
    resumeAfter: string | undefined,
    onPage: (cursor: string) => void,
    log: DeliveryLog,
  ): Promise<ProviderSweepResult> {
    const sweep = this.deps.providerSweep;
    if (sweep.windowDays === 0) return { checked: 0, followed: 0, failed: 0 };
    return sweepProviderTruth(sweep, resumeAfter, onPage, (details, message) => {
      log.warn(details, message);
    });
  }
}

/** Runs one page's purge until a page comes back short, or for {@link PURGE_PAGES_PER_RUN} pages. */
async function purgeInPages(purgePage: () => Promise<number>): Promise<number> {
  let purged = 0;
  for (let page = 0; page < PURGE_PAGES_PER_RUN; page++) {
    const count = await purgePage();
    purged += count;
    if (count < PURGE_PAGE) break;
  }
  return purged;
}
