import { WorkflowNotFoundError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import type { DonationRepository } from '../donations/donation-repository';
import type { FollowUpWorkflows } from '../donations/follow-up-workflows';
import type { ProviderRegistry } from '../providers/payment-provider';
import { verifiesWithProvider } from '../providers/provider-verification';
import type { OverdueDonation, ReconciliationRepository } from './reconciliation-repository';
import type { DonationInput, StuckDecision } from '../../workflows/contracts';

export interface StuckDonationsDeps {
  repository: ReconciliationRepository;
  temporal: Client;
  /** Donations are handed back to this task queue, and only if their last run was on it. */
  taskQueue: string;
  providers: ProviderRegistry;
  donations: DonationRepository;
  followUps: FollowUpWorkflows;
  paymentTimeoutSeconds: number;
  settleHorizonSeconds: number;
  graceSeconds: number;
}

/** Memo key on a workflow run that reconciliation started. */
const HANDED_BACK_BY = 'handedBackBy';
/** Overdue donations are read in pages of this many until none are left. */
const PAGE = 100;

/**
 * Open donations (PENDING, AWAITING_PAYMENT) past their payment deadline whose workflow no longer
 * runs: terminated by hand, failed, or gone. Such a donation is stuck: nobody will ever ask the
 * provider about it. It is handed back by starting its workflow again under the same ID, with
 * its input rebuilt from the row; that is safe because every activity is keyed by the donation
 * (see docs/operations.md). With its deadline already behind it, the new run waits no longer:
 * it asks the provider at once and credits, expires or cancels, like the first run would have.
 */
export class StuckDonations {
  constructor(private readonly deps: StuckDonationsDeps) {}

  /** Read-only: every overdue open donation and what would be done about it. */
  async plan(runId?: string): Promise<StuckDecision[]> {
    const decisions: StuckDecision[] = [];
    for await (const donation of this.overdue()) {
      decisions.push(await this.decide(donation, runId));
    }
    return decisions;
  }

  /** Hands back what {@link plan} marks; returns the donations handed back by this run. */
  async handBack(runId: string): Promise<StuckDecision[]> {
    const handedBack: StuckDecision[] = [];
    for await (const donation of this.overdue()) {
      const decision = await this.decide(donation, runId);
      if (decision.dead) await this.deps.donations.markDeadLetter(donation.id, decision.reason);
      if (decision.action !== 'hand-back') continue;
      // A run of this reconciliation (an earlier attempt of the activity) already started it.
      if (decision.workflow === 'RUNNING' || (await this.start(donation, runId))) {
        handedBack.push(decision);
      }
    }
    return handedBack;
  }

  /**
   * Every open donation past its deadline that is not a dead letter, page by page: rows left
   * alone never hide the ones behind them.
   */
  private async *overdue(): AsyncGenerator<OverdueDonation> {
    let afterId: string | undefined;
    for (;;) {
      const page = await this.deps.repository.findOverdue(
        this.deps.paymentTimeoutSeconds + this.deps.graceSeconds,
        PAGE,
        afterId,
      );
      yield* page;
      const last = page[page.length - 1];
      if (page.length < PAGE || !last) return;
      afterId = last.id;
    }
  }

  private async decide(
    donation: OverdueDonation,
    runId: string | undefined,
  ): Promise<StuckDecision & { dead?: boolean }> {
    const base = {
      donationId: donation.id,
      workflowId: donation.workflowId,
      status: donation.status,
    };
    let description;
    try {
      description = await this.deps.temporal.workflow.getHandle(donation.workflowId).describe();
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
      return {
        ...base,
        workflow: 'not-found',
        action: 'hand-back' as const,
        reason: 'no workflow',
      };
    }
    const workflow = description.status.name;
    const leave = (reason: string): StuckDecision => ({
      ...base,
      workflow,
      action: 'leave',
      reason,
    });
    const handedBackBy = description.memo?.[HANDED_BACK_BY];
    if (workflow === 'RUNNING') {
      return runId !== undefined && handedBackBy === runId
        ? { ...base, workflow, action: 'hand-back', reason: 'handed back by this run' }
        : leave('workflow running');
    }
    if (description.taskQueue !== this.deps.taskQueue) {
      return leave(`last run on task queue ${description.taskQueue}`);
    }
    if (handedBackBy !== undefined) {
      // Handed back once and closed again without deciding: a dead letter for an operator,
      // not something to restart every few minutes.
      return {
        ...leave(`handed back by ${JSON.stringify(handedBackBy)} and closed ${workflow}`),
        dead: true,
      };
    }
    return { ...base, workflow, action: 'hand-back' as const, reason: `workflow ${workflow}` };
  }

  /** Starts the donation's workflow again; false if another start won the race. */
  private async start(donation: OverdueDonation, runId: string): Promise<boolean> {
    const input: DonationInput = {
      campaignId: donation.campaignId,
      amount: donation.amount,
      currency: donation.currency,
      paymentMethod: donation.paymentMethod,
      donationId: donation.id,
      clientId: donation.clientId,
      idempotencyKey: donation.idempotencyKey,
      workflowId: donation.workflowId,
      provider: donation.provider,
      // The deadline has passed (that is how it was found): ask the provider now.
      paymentTimeoutSeconds: 0,
      verifyWithProvider: verifiesWithProvider(this.deps.providers, donation.provider),
      settleHorizonSeconds: this.deps.settleHorizonSeconds,
      // The donation's own request id, so the new run's lines join the first run's.
      correlationId: donation.correlationId ?? `reconciliation:${runId}`,
    };
    return this.deps.followUps.handBack(input, donation.status, { [HANDED_BACK_BY]: runId });
  }
}
