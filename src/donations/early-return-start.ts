import { WithStartWorkflowOperation, WorkflowUpdateFailedError } from '@temporalio/client';
import type { Client, WorkflowStartOptions } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { EarlyReturnConfig } from '../config/config';
import type { DonationMetrics } from '../observability/metrics';
import { donationStartOptions } from './donation-start-options';
import {
  paymentActionUpdate,
  paymentActionUpdateId,
  WorkflowType,
} from '../../workflows/contracts';
import type {
  DonationInput,
  DonationWorkflow,
  PaymentActionResult,
} from '../../workflows/contracts';

export interface EarlyReturnStartDeps {
  temporal: Client;
  taskQueue: string;
  earlyReturn: EarlyReturnConfig;
  /** The deadline of the start that does not wait for the payment action. */
  temporalTimeoutMs: number;
  metrics?: DonationMetrics | undefined;
}

/** How a start ended: with the payment action, started without it, or refused by the workflow. */
export type StartOutcome =
  | { kind: 'action'; result: PaymentActionResult }
  | { kind: 'started'; reason: 'budget' | 'admission' | 'not-waited' }
  | { kind: 'refused'; error: WorkflowUpdateFailedError };

/**
 * Starts a donation's one workflow and waits, within a budget, for its payment action. The
 * normal path is update-with-start: one call starts the workflow (or finds it) and waits for
 * the `paymentAction` update, whose ID derives from the donation, so a retry, a second edge or
 * a take-over attaches to the same update instead of adding one (the server caps them).
 *
 * Past the budget (EARLY_RETURN_MS), or when EARLY_RETURN_MAX_IN_FLIGHT waits are held in this
 * process already, the workflow is started without waiting (start with USE_EXISTING: one
 * call, whatever ran before) and the caller answers PENDING: the edge never queues more than it
 * can answer within the budget. Past the budget, a donation recorded since the request began
 * proves the start without that call. Either way the caller knows the workflow exists before it
 * answers; only a start that Temporal did not take is an error (503).
 */
export class EarlyReturnStart {
  private waiting = 0;

  constructor(private readonly deps: EarlyReturnStartDeps) {}

  /**
   * Waits for the payment action at most the budget; throws only when Temporal is away. Past
   * the budget, `recordedSince` may prove the start without a second call: the donation was
   * recorded, by its workflow's first step, after this request began (see DonationService).
   */
  async start(input: DonationInput, recordedSince?: () => Promise<boolean>): Promise<StartOutcome> {
    const options = this.startOptions(input);
    const { budgetMs, maxInFlight } = this.deps.earlyReturn;
    if (budgetMs === 0) return this.startOnly(options, 'budget');
    if (this.waiting >= maxInFlight) return this.startOnly(options, 'admission');
    this.waiting++;
    try {
      const result = await this.deps.temporal.connection.withDeadline(Date.now() + budgetMs, () =>
        this.deps.temporal.workflow.executeUpdateWithStart<
          DonationWorkflow,
          PaymentActionResult,
          []
        >(paymentActionUpdate, {
          updateId: paymentActionUpdateId(input.donationId),
          startWorkflowOperation: new WithStartWorkflowOperation<DonationWorkflow>(
            WorkflowType.donation,
            options,
          ),
        }),
      );
      this.deps.metrics?.earlyReturns.inc({ outcome: 'action' });
      return { kind: 'action', result };
    } catch (error) {
      if (isTypedUpdateFailure(error)) return { kind: 'refused', error };
      // Past the budget, Temporal away, or the workflow closed: make sure it exists.
    } finally {
      this.waiting--;
    }
    // Only the workflow records a donation: no second start against a server already late.
    // A record that cannot be read proves nothing: the start is made as before.
    if (await recordedSince?.().catch(() => false)) {
      this.deps.metrics?.earlyReturns.inc({ outcome: 'budget' });
      return { kind: 'started', reason: 'budget' };
    }
    return this.startOnly(options, 'budget');
  }

  /** Starts the workflow (or finds it) and waits for nothing: a caller no donor waits on. */
  async startWithoutWaiting(input: DonationInput): Promise<StartOutcome> {
    return this.startOnly(this.startOptions(input), 'not-waited');
  }

  /**
   * Starts the workflow, or finds it running, without waiting for anything. A closed one is
   * not started again unless it failed; that and an unreachable Temporal throw.
   */
  private async startOnly(
    options: WorkflowStartOptions<DonationWorkflow>,
    reason: 'budget' | 'admission' | 'not-waited',
  ): Promise<StartOutcome> {
    await this.deps.temporal.connection.withDeadline(Date.now() + this.deps.temporalTimeoutMs, () =>
      this.deps.temporal.workflow.start<DonationWorkflow>(WorkflowType.donation, options),
    );
    // The early-return metric counts donors' answers; a start no donor waits on is not one.
    if (reason !== 'not-waited') this.deps.metrics?.earlyReturns.inc({ outcome: reason });
    return { kind: 'started', reason };
  }

  private startOptions(
    input: DonationInput,
  ): WorkflowStartOptions<DonationWorkflow> & { workflowIdConflictPolicy: 'USE_EXISTING' } {
    return {
      ...donationStartOptions(input, this.deps.taskQueue, { status: 'PENDING' }),
      workflowIdConflictPolicy: 'USE_EXISTING',
      // A run that failed, timed out or was terminated may be started again by a retry: every
      // activity is idempotent and keyed by the donation. A completed one is never run again.
      workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
    };
  }
}

/** The workflow refused the donation with a typed failure (declined, closed, …): a 4xx. */
function isTypedUpdateFailure(error: unknown): error is WorkflowUpdateFailedError {
  return error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure;
}
