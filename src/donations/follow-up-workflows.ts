import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import {
  latePaymentWorkflowId,
  paymentSyncSignal,
  paymentSyncWorkflowId,
  refundRequestWorkflowId,
  reversalEventSignal,
  reversalWorkflowId,
  WorkflowType,
} from '../../workflows/contracts';
import { donationStartOptions } from './donation-start-options';
import type {
  DisputeEvent,
  DonationInput,
  DonationStatus,
  DonationWorkflow,
  LatePaymentInput,
  LatePaymentWorkflow,
  PaymentRef,
  PaymentSyncWorkflow,
  RefundEvent,
  RefundRequestInput,
  RefundRequestWorkflow,
  ReversalOutcome,
  ReversalWorkflow,
} from '../../workflows/contracts';

/** A workflow started once per ID: whether this call started it, or met it done before. */
export interface StartedOnce {
  workflowId: string;
  started: boolean;
}

/**
 * Starts the workflows that follow money after a donation's own workflow: one per provider
 * refund or dispute, one per late payment, one per operator refund request, and a stuck
 * donation's workflow again. Every ID derives from the donation and the provider's ids, so the
 * webhook intake, reconciliation, the ops CLI and activities can all call these without ever
 * starting one twice. (The edge's own start, update-with-start, is in early-return-start.ts.)
 */
export class FollowUpWorkflows {
  constructor(
    private readonly temporal: Client,
    private readonly taskQueue: string,
  ) {}

  /**
   * Hands a refund or dispute event to its reversal workflow: signals the running one, or starts
   * it (again, if an earlier run closed: a refund that failed after succeeding posts its
   * give-back in a new run). Returns the workflow ID.
   */
  async followReversal(ref: PaymentRef, event: RefundEvent | DisputeEvent): Promise<string> {
    const workflowId = reversalWorkflowId(
      ref.donationId,
      event.kind,
      event.kind === 'refund' ? event.refundId : event.disputeId,
    );
    await this.temporal.workflow.signalWithStart<ReversalWorkflow, [RefundEvent | DisputeEvent]>(
      WorkflowType.reversal,
      {
        workflowId,
        taskQueue: this.taskQueue,
        args: [{ ...ref, event }],
        signal: reversalEventSignal,
        signalArgs: [event],
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      },
    );
    return workflowId;
  }

  /**
   * How a refund's reversal workflow ended: its outcome, `closed` when it closed without one
   * (failed, terminated), undefined while it runs or before it starts. Read, never waited on.
   */
  async reversalOutcome(
    donationId: string,
    refundId: string,
  ): Promise<ReversalOutcome | 'closed' | undefined> {
    const workflowId = reversalWorkflowId(donationId, 'refund', refundId);
    try {
      const { status, runId } = await this.temporal.workflow.getHandle(workflowId).describe();
      if (status.name === 'RUNNING') return undefined;
      if (status.name !== 'COMPLETED') return 'closed';
      const handle = this.temporal.workflow.getHandle<ReversalWorkflow>(workflowId, runId);
      return (await handle.result()).outcome;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return undefined;
      throw error;
    }
  }

  /** Has the payment's provider record read again (signal-with-start); returns the ID. */
  async syncPayment(ref: PaymentRef): Promise<string> {
    const workflowId = paymentSyncWorkflowId(ref.donationId);
    await this.temporal.workflow.signalWithStart<PaymentSyncWorkflow>(WorkflowType.paymentSync, {
      workflowId,
      taskQueue: this.taskQueue,
      args: [ref],
      signal: paymentSyncSignal,
      signalArgs: [],
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    });
    return workflowId;
  }

  /**
   * Starts a donation's late-payment workflow, or meets the running one. A finished one may run
   * again: one that found the payment not paid yet must not block the real payment. Callers start
   * it only for a donation never credited, and the credit itself is once (the ledger's key).
   */
  async startLatePayment(input: LatePaymentInput): Promise<StartedOnce> {
    return this.startOnce<LatePaymentWorkflow>(
      WorkflowType.latePayment,
      latePaymentWorkflowId(input.donationId),
      input,
      'ALLOW_DUPLICATE',
    );
  }

  /** Starts an operator's refund request; the same request key meets the same workflow. */
  async startRefundRequest(input: RefundRequestInput): Promise<string> {
    const { workflowId } = await this.startOnce<RefundRequestWorkflow>(
      WorkflowType.refundRequest,
      refundRequestWorkflowId(input.donationId, input.requestKey),
      input,
    );
    return workflowId;
  }

  /**
   * Starts a stuck donation's workflow again under its own ID, its last run being closed; false
   * when a running one (an edge or an operator got there first) wins. `memo` marks who did it.
   */
  async handBack(
    input: DonationInput,
    status: DonationStatus,
    memo: Record<string, unknown>,
  ): Promise<boolean> {
    try {
      await this.temporal.workflow.start<DonationWorkflow>(WorkflowType.donation, {
        ...donationStartOptions(input, this.taskQueue, { status, memo }),
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        workflowIdConflictPolicy: 'FAIL',
      });
      return true;
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) return false;
      throw error;
    }
  }

  private async startOnce<W extends LatePaymentWorkflow | RefundRequestWorkflow>(
    type: string,
    workflowId: string,
    input: Parameters<W>[0],
    workflowIdReusePolicy:
      'ALLOW_DUPLICATE' | 'ALLOW_DUPLICATE_FAILED_ONLY' = 'ALLOW_DUPLICATE_FAILED_ONLY',
  ): Promise<StartedOnce> {
    try {
      await this.temporal.workflow.start<W>(type, {
        workflowId,
        taskQueue: this.taskQueue,
        args: [input] as Parameters<W>,
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy,
      });
    } catch (error) {
      // Done before: it ran to its end once and is not repeated.
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      return { workflowId, started: false };
    }
    return { workflowId, started: true };
  }
}
