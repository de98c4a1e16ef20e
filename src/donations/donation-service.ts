import type { Client } from '@temporalio/client';
import type { ApplicationFailure } from '@temporalio/common';
import type { CampaignRepository } from '../campaigns/campaign-repository';
import { acceptsDonations } from '../campaigns/campaign-repository';
import { AppError } from '../errors/error-catalogue';
import { deriveUuid } from '../idempotency/idempotency-key';
import type { IdempotencyScope } from '../idempotency/idempotency-key';
import { isSupportedCurrency } from '../money/currency';
import type { ProviderRegistry } from '../providers/payment-provider';
import { verifiesWithProvider } from '../providers/provider-verification';
import type { FollowUpWorkflows } from './follow-up-workflows';
import type { Donation } from './donation';
import type { DonationRepository } from './donation-repository';
import type { DonorDetailsRepository } from './donor-details-repository';
import { acceptedAnswer, pendingAnswer } from './donation-views';
import type { DonationAccepted, RefundAccepted } from './donation-schemas';
import { donationWorkflowId } from '../../workflows/contracts';
import type { DonationInput, DonationRequest, SavedMethodUse } from '../../workflows/contracts';
import type { EarlyReturnConfig } from '../config/config';
import type { DonationMetrics } from '../observability/metrics';
import { failureMessage, failureTypeCodes, refusalCode } from './donation-failures';
import { EarlyReturnStart } from './early-return-start';
import type { StartOutcome } from './early-return-start';
import { planRefund } from './refund-plan';
import type { RefundPlan } from './refund-plan';

export interface DonationServiceDeps {
  temporal: Client;
  campaigns: CampaignRepository;
  donations: DonationRepository;
  donorDetails: DonorDetailsRepository;
  providers: ProviderRegistry;
  followUps: FollowUpWorkflows;
  taskQueue: string;
  provider: string;
  /** Providers being retired (PROVIDERS_CLOSING): they finish their donations, take no new ones. */
  closingProviders: readonly string[];
  /** Whether that provider's notifications must be confirmed with its status API. */
  verifyWithProvider: boolean;
  paymentTimeoutSeconds: number;
  settleHorizonSeconds: number;
  /** How long the edge waits on one Temporal call (a start, a refund) before answering 503. */
  temporalTimeoutMs: number;
  earlyReturn: EarlyReturnConfig;
  metrics?: DonationMetrics | undefined;
}

/**
 * Starts donations and their operators' refunds: the edge's only way to start a donation's
 * workflow. Reading one back is {@link DonationReads}'.
 */
export class DonationService {
  private readonly starter: EarlyReturnStart;

  constructor(private readonly deps: DonationServiceDeps) {
    this.starter = new EarlyReturnStart({ ...deps, metrics: deps.metrics });
  }

  /**
   * Checks the request against the provider (a closing one takes no new donations) and the
   * campaign (cheap, deterministic refusals are answered here and cached by the idempotency
   * layer), then starts the donation's one workflow and waits,
   * within EARLY_RETURN_MS, until the provider has created the payment: the answer carries what
   * the donor must do to pay, or is PENDING with `paymentAction: null` (the GET shows it once
   * it exists). Starting is idempotent: a running workflow with this ID is reused, a completed
   * one is not started again, so two edges that miss each other still start one. Without
   * `waitForAction` (a pledge's period, which no donor waits on) it only starts; `savedMethod`
   * keeps the donor's method or charges a kept one, through `provider`, the pledge's (pledges).
   */
  async create(
    scope: IdempotencyScope,
    request: DonationRequest,
    correlationId: string,
    {
      waitForAction = true,
      savedMethod,
      provider = this.deps.provider,
    }: {
      waitForAction?: boolean;
      savedMethod?: SavedMethodUse | undefined;
      provider?: string | undefined;
    } = {},
  ): Promise<DonationAccepted> {
    await this.assertAcceptable(request, provider);
    const donationId = deriveUuid(scope);
    const { donor, message, ...rest } = request;
    // The donor's data goes to Postgres, not into the workflow's input: no history holds it.
    const unrecorded = await this.deps.donorDetails.save(donationId, { donor, message });
    const input: DonationInput = {
      ...rest,
      donationId,
      clientId: scope.clientId,
      idempotencyKey: scope.key,
      workflowId: donationWorkflowId(donationId),
      provider,
      paymentTimeoutSeconds: this.deps.paymentTimeoutSeconds,
      verifyWithProvider:
        provider === this.deps.provider
          ? this.deps.verifyWithProvider
          : verifiesWithProvider(this.deps.providers, provider),
      settleHorizonSeconds: this.deps.settleHorizonSeconds,
      correlationId,
      ...(savedMethod && { savedMethod }),
    };

    let outcome: StartOutcome | undefined;
    let cause: unknown;
    // Unrecorded when its details were saved: a record now is its workflow's, started since.
    // Read once past the budget: it proves the start, and the answer below is made from it.
    let record: Donation | undefined;
    const recordedSince = unrecorded
      ? async () => {
          record = await this.deps.donations.findById(donationId);
          return record !== undefined;
        }
      : undefined;
    try {
      outcome = await (waitForAction
        ? this.starter.start(input, recordedSince)
        : this.starter.startWithoutWaiting(input));
    } catch (error) {
      cause = error;
    }
    if (outcome?.kind === 'action') {
      const { status, action } = outcome.result;
      return { ...pendingAnswer(input), status, paymentAction: action };
    }
    if (outcome?.kind === 'refused') {
      const code = failureTypeCodes[(outcome.error.cause as ApplicationFailure).type ?? ''];
      if (code) throw new AppError(code, { detail: failureMessage(outcome.error) });
      cause = outcome.error;
    }
    // Started without its action, closed already (a retry after it finished), refused in an
    // earlier run, or Temporal away: Postgres knows whether the payment exists.
    const donation = record ?? (await this.deps.donations.findById(donationId));
    if (donation?.paymentAction) return acceptedAnswer(donation, donation.status);
    const refused = refusalCode(donation?.failureReason);
    if (refused) throw new AppError(refused);
    if (outcome?.kind === 'started') return pendingAnswer(input);
    throw new AppError('service-unavailable', {
      detail: 'The donation could not be started now; retry with the same Idempotency-Key.',
      retryAfter: 2,
      cause,
    });
  }

  /**
   * A provider (new donations' own, or a pledge's) and a campaign that take this donation now;
   * else the problem a client gets.
   */
  async assertAcceptable(
    request: Pick<DonationRequest, 'campaignId' | 'currency'>,
    provider = this.deps.provider,
  ): Promise<void> {
    if (this.deps.closingProviders.includes(provider) || !this.deps.providers.has(provider)) {
      throw new AppError('provider-closing', {
        detail: 'Donations are paused while the payment provider is being retired.',
      });
    }
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
    await this.withTemporal(() => this.deps.followUps.startRefundRequest(refund));
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
    return planRefund(donation, this.deps.providers, { amount, reason, requestKey });
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
