import { WithStartWorkflowOperation, WorkflowUpdateFailedError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { CampaignRepository } from '../campaigns/campaign-repository';
import { acceptsDonations } from '../campaigns/campaign-repository';
import { AppError } from '../errors/error-catalogue';
import type { ErrorCode } from '../errors/error-catalogue';
import { deriveUuid } from '../idempotency/idempotency-key';
import type { IdempotencyScope } from '../idempotency/idempotency-key';
import { isSupportedCurrency } from '../money/currency';
import type { ProviderRegistry } from '../providers/payment-provider';
import type { MoneyWorkflows } from '../temporal/money-workflows';
import type { Donation } from './donation';
import type { DonationRepository } from './donation-repository';
import type { DonationAccepted, DonationView, RefundAccepted } from './donation-schemas';
import { donationStartOptions } from './donation-start';
import {
  donationWorkflowId,
  FailureType,
  getStateQuery,
  paymentActionUpdate,
  refundRequestWorkflowId,
  WorkflowType,
} from '../../workflows/contracts';
import type {
  DonationInput,
  DonationRequest,
  DonationWorkflow,
  PaymentActionResult,
  RefundRequestInput,
} from '../../workflows/contracts';

export interface DonationServiceDeps {
  temporal: Client;
  campaigns: CampaignRepository;
  donations: DonationRepository;
  providers: ProviderRegistry;
  moneyWorkflows: MoneyWorkflows;
  taskQueue: string;
  provider: string;
  /** Whether that provider's notifications must be confirmed with its status API. */
  verifyPaymentStatus: boolean;
  paymentTimeoutSeconds: number;
  settleHorizonSeconds: number;
  /** How long the edge waits on Temporal (and the provider behind it) before answering 503. */
  temporalTimeoutMs: number;
}

export interface RefundPlan {
  donation: Donation;
  refund: RefundRequestInput;
  /** The workflow of this refund request. */
  workflowId: string;
}

/** Typed, non-retryable workflow failures → the 4xx the client gets (and the edge caches). */
const failureTypeCodes: Partial<Record<string, ErrorCode>> = {
  [FailureType.CampaignClosed]: 'campaign-closed',
  [FailureType.PaymentDeclined]: 'payment-declined',
  [FailureType.UnsupportedCurrency]: 'unsupported-currency',
  [FailureType.Validation]: 'validation-failed',
};

/** A donation's recorded failure reason, for answering after its workflow has closed. */
const failureReasonCodes: Partial<Record<string, ErrorCode>> = {
  'campaign-closed': 'campaign-closed',
  'currency-mismatch': 'currency-mismatch',
  'unsupported-by-provider': 'validation-failed',
  'payment-declined': 'payment-declined',
  'provider-refused': 'validation-failed',
};

/** A donation whose money can still be refunded, in part or in full. */
const REFUNDABLE: readonly string[] = ['CONFIRMED', 'PARTIALLY_REFUNDED'];

/** Starts donations and reads them back; the edge's only way into the donation workflow. */
export class DonationService {
  constructor(private readonly deps: DonationServiceDeps) {}

  /**
   * Checks the request against the campaign (cheap, deterministic refusals are answered here
   * and cached by the idempotency layer), then starts the donation's one workflow and waits,
   * through an update, until the provider has created the payment: the answer carries what the
   * donor must do to pay. Starting is idempotent: a running workflow with this ID is reused, a
   * closed one is not started again, so two edges that miss each other still start one.
   */
  async create(
    scope: IdempotencyScope,
    request: DonationRequest,
    correlationId: string,
  ): Promise<DonationAccepted> {
    if (!isSupportedCurrency(request.currency)) {
      throw new AppError('unsupported-currency', {
        detail: `${request.currency} is not accepted.`,
      });
    }
    const campaign = await this.deps.campaigns.findById(request.campaignId);
    if (!campaign) throw new AppError('campaign-not-found');
    if (!acceptsDonations(campaign, new Date())) throw new AppError('campaign-closed');
    if (campaign.currency !== request.currency) {
      throw new AppError('currency-mismatch', {
        detail: `Campaign ${campaign.id} takes ${campaign.currency}.`,
      });
    }

    const donationId = deriveUuid(scope);
    const workflowId = donationWorkflowId(donationId);
    const input: DonationInput = {
      ...request,
      donationId,
      clientId: scope.clientId,
      idempotencyKey: scope.key,
      workflowId,
      provider: this.deps.provider,
      paymentTimeoutSeconds: this.deps.paymentTimeoutSeconds,
      verifyPaymentStatus: this.deps.verifyPaymentStatus,
      settleHorizonSeconds: this.deps.settleHorizonSeconds,
      correlationId,
    };
    const startWorkflowOperation = new WithStartWorkflowOperation<DonationWorkflow>(
      WorkflowType.donation,
      {
        ...donationStartOptions(input, this.deps.taskQueue, { status: 'PENDING' }),
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      },
    );

    let result: PaymentActionResult;
    try {
      result = await this.deps.temporal.connection.withDeadline(
        Date.now() + this.deps.temporalTimeoutMs,
        () =>
          this.deps.temporal.workflow.executeUpdateWithStart<
            DonationWorkflow,
            PaymentActionResult,
            []
          >(paymentActionUpdate, { startWorkflowOperation }),
      );
    } catch (error) {
      const code = businessFailure(error);
      if (code) throw new AppError(code, { detail: failureMessage(error) });
      // The workflow may be closed already (a retry after it finished) or Temporal may be away:
      // Postgres knows whether the payment exists, and then the answer is the same as before.
      const donation = await this.deps.donations.findById(donationId);
      if (donation?.paymentAction) return accepted(donation, donation.status);
      const refused = failureReasonCodes[donation?.failureReason ?? ''];
      if (refused) throw new AppError(refused);
      throw new AppError('service-unavailable', {
        detail: 'The donation could not be started now; retry with the same Idempotency-Key.',
        retryAfter: 2,
        cause: error,
      });
    }
    return {
      id: donationId,
      status: result.status,
      campaignId: request.campaignId,
      amount: request.amount,
      currency: request.currency,
      paymentAction: result.action,
      links: { self: `/v1/donations/${donationId}` },
    };
  }

  /**
   * An operator's refund: starts its refund-request workflow, which asks the provider once under
   * a key derived from the donation and the operator's Idempotency-Key, then follows the refund
   * like any other; the ledger moves when the provider reports it succeeded.
   */
  async requestRefund(
    id: string,
    amount: number | undefined,
    reason: string,
    requestKey: string,
  ): Promise<RefundAccepted> {
    const { refund, workflowId } = await this.planRefund(id, amount, reason, requestKey);
    await this.withTemporal(() => this.deps.moneyWorkflows.startRefundRequest(refund));
    return {
      donationId: id,
      kind: 'REFUND',
      amount: refund.amount,
      status: 'REQUESTED',
      workflowId,
      links: { donation: `/v1/donations/${id}` },
    };
  }

  /**
   * What an operator's refund would do, refusing what {@link requestRefund} refuses; the ops
   * CLI's dry run shows this without starting anything.
   */
  async planRefund(
    id: string,
    amount: number | undefined,
    reason: string,
    requestKey: string,
  ): Promise<RefundPlan> {
    const donation = await this.find(id, undefined);
    if (!REFUNDABLE.includes(donation.status) || !donation.providerReference) {
      throw new AppError('donation-not-refundable', {
        detail: `The donation is ${donation.status}.`,
      });
    }
    const provider = this.deps.providers.get(donation.provider);
    if (!provider?.refundable(donation.paymentMethod)) {
      throw new AppError('donation-not-refundable', {
        detail: `${donation.provider} cannot refund ${donation.paymentMethod} payments by API.`,
      });
    }
    const refund: RefundRequestInput = {
      donationId: id,
      campaignId: donation.campaignId,
      provider: donation.provider,
      providerReference: donation.providerReference,
      verifyWithProvider: provider.verifyBeforeCredit,
      amount: Math.min(amount ?? donation.amount, donation.amount),
      currency: donation.currency,
      reason,
      requestKey,
    };
    return { donation, refund, workflowId: refundRequestWorkflowId(id, requestKey) };
  }

  /** Postgres is the truth; a running workflow adds its live state. */
  async get(id: string, clientId: string | undefined): Promise<DonationView> {
    const donation = await this.find(id, clientId);
    return { ...toView(donation), workflow: await this.liveState(donation.workflowId) };
  }

  /** The donation, visible to its own client or to an operator (`clientId` undefined). */
  async find(id: string, clientId: string | undefined): Promise<Donation> {
    const donation = await this.deps.donations.findById(id);
    if (!donation || (clientId !== undefined && donation.clientId !== clientId)) {
      throw new AppError('donation-not-found');
    }
    return donation;
  }

  private withTemporal<T>(fn: () => Promise<T>): Promise<T> {
    return withDeadlineOr503(this.deps.temporal, this.deps.temporalTimeoutMs, fn);
  }

  private async liveState(workflowId: string): Promise<DonationView['workflow']> {
    try {
      return await this.deps.temporal.connection.withDeadline(Date.now() + 1_000, async () => {
        const handle = this.deps.temporal.workflow.getHandle(workflowId);
        const description = await handle.describe();
        if (description.status.name !== 'RUNNING') return { id: workflowId, running: false };
        const state = await handle.query(getStateQuery);
        return { id: workflowId, running: true, state };
      });
    } catch {
      // Temporal is an enrichment here; the answer from Postgres stands on its own.
      return undefined;
    }
  }
}

async function withDeadlineOr503<T>(
  temporal: Client,
  timeoutMs: number,
  fn: () => Promise<T>,
): Promise<T> {
  try {
    return await temporal.connection.withDeadline(Date.now() + timeoutMs, fn);
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw new AppError('service-unavailable', {
      detail: 'The workflow service is unreachable; retry with the same Idempotency-Key.',
      retryAfter: 2,
      cause: error,
    });
  }
}

function accepted(donation: Donation, status: string): DonationAccepted {
  return {
    id: donation.id,
    status,
    campaignId: donation.campaignId,
    amount: donation.amount,
    currency: donation.currency,
    paymentAction: donation.paymentAction,
    links: { self: `/v1/donations/${donation.id}` },
  };
}

function businessFailure(error: unknown): ErrorCode | undefined {
  if (!(error instanceof WorkflowUpdateFailedError)) return undefined;
  const cause = error.cause;
  return cause instanceof ApplicationFailure ? failureTypeCodes[cause.type ?? ''] : undefined;
}

function failureMessage(error: unknown): string | undefined {
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error ? cause.message : undefined;
}

function toView(donation: Donation): DonationView {
  return {
    id: donation.id,
    status: donation.status,
    campaignId: donation.campaignId,
    amount: donation.amount,
    currency: donation.currency,
    donor: {
      name: donation.donor.anonymous ? 'Anonymous' : donation.donor.name,
      anonymous: donation.donor.anonymous,
    },
    message: donation.message,
    paymentMethod: donation.paymentMethod,
    provider: donation.provider,
    paymentAction: donation.paymentAction,
    failureReason: donation.failureReason,
    confirmedAt: donation.confirmedAt?.toISOString() ?? null,
    createdAt: donation.createdAt.toISOString(),
    updatedAt: donation.updatedAt.toISOString(),
  };
}
