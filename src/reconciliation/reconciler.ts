import type { ProgressCache } from '../campaigns/progress-cache';
import type { DeliveryLog, WebhookDelivery } from '../webhooks/webhook-delivery';
import type { InboxEntry } from '../webhooks/webhook-inbox-repository';
import type {
  CampaignDrift,
  CampaignRepair,
  ReconciliationRepository,
} from './reconciliation-repository';
import type { StuckDecision, StuckDonations } from './stuck-donations';

export interface ReconcilerDeps {
  repository: ReconciliationRepository;
  progressCache: ProgressCache;
  delivery: WebhookDelivery;
  stuck: StuckDonations;
  /** Undelivered webhooks younger than this are left to the API's own redelivery loop. */
  graceSeconds: number;
}

/** What a dry run shows: everything a run would touch, computed without changing anything. */
export interface ReconciliationPlan {
  campaignsChecked: number;
  drift: CampaignDrift[];
  stuck: StuckDecision[];
  inbox: InboxEntry[];
}

export interface TotalsResult {
  campaignsChecked: number;
  driftCampaigns: number;
  repaired: CampaignRepair[];
  /** Campaigns whose total moved between reading and repairing: the next run looks again. */
  skipped: string[];
}

/** What a reconciliation run did; the workflow's result and the ops CLI's output. */
export interface ReconciliationReport extends TotalsResult {
  runId: string;
  workflowId: string;
  stuckRestarted: StuckDecision[];
  inboxRedelivered: number;
}

const INBOX_LIMIT = 100;

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

  handBackStuck(runId: string): Promise<StuckDecision[]> {
    return this.deps.stuck.handBack(runId);
  }

  redeliverInbox(log: DeliveryLog): Promise<number> {
    return this.deps.delivery.redeliver(log, INBOX_LIMIT, {
      olderThanMs: this.deps.graceSeconds * 1000,
    });
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
    });
  }
}
