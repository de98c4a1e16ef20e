/** A campaign total that drifted from its ledger, before and after the repair. */
export interface CampaignRepair {
  campaignId: string;
  before: { amount: number; count: number; version: number };
  after: { amount: number; count: number; version: number };
}

export interface TotalsResult {
  campaignsChecked: number;
  driftCampaigns: number;
  repaired: CampaignRepair[];
  /** Campaigns whose total moved between reading and repairing: the next run looks again. */
  skipped: string[];
}

/** What reconciliation does, or would do, about one overdue donation. */
export interface StuckDecision {
  donationId: string;
  workflowId: string;
  status: string;
  /** The workflow's state: `not-found` (never started, or its history is gone) or its status. */
  workflow: string;
  action: 'hand-back' | 'leave' | 'late-payment';
  reason: string;
}

/** What one sweep against the providers' records found (see src/reconciliation/provider-sweep.ts). */
export interface ProviderSweepResult {
  /** Payments whose provider record was read. */
  checked: number;
  /** Refunds, disputes, reversed and late payments handed to their workflows. */
  followed: number;
  /** Reads that failed; the next run reads them again. */
  failed: number;
}

/** What a run purged of personal data past its retention. */
export interface PersonalDataPurged {
  /** Raw webhook bodies whose payer data this run dropped (WEBHOOK_BODY_RETENTION_DAYS). */
  bodiesPurged: number;
  /** Donor details of accepts whose donation was never recorded, a week on. */
  donorDetailsPurged: number;
}

/** What a run did with the kept cards pledges let go of (src/pledges/kept-method-releaser.ts). */
export interface KeptMethodsReleased {
  /** Released at their provider by this run. */
  released: number;
  /** Not released this time (the provider away or refusing): the next run tries again. */
  failed: number;
  /** Tried as often as they may be: left for an operator, in `kept_method_releases`. */
  leftForOperator: number;
}

/** What a reconciliation run did; the workflow's result and the ops CLI's output. */
export interface ReconciliationReport extends TotalsResult, PersonalDataPurged {
  runId: string;
  workflowId: string;
  stuckRestarted: StuckDecision[];
  inboxRedelivered: number;
  providerSweep: ProviderSweepResult;
  keptMethods: KeptMethodsReleased;
}
