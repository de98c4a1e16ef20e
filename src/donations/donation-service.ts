import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import type { CampaignRepository } from '../campaigns/campaign-repository';
import { acceptsDonations } from '../campaigns/campaign-repository';
import { AppError } from '../errors/error-catalogue';
import { deriveUuid } from '../idempotency/idempotency-key';
import type { IdempotencyScope } from '../idempotency/idempotency-key';
import { isSupportedCurrency } from '../money/currency';
import type { DonationInput, DonationRequest } from './donation';
import type { DonationRepository } from './donation-repository';
import type { DonationAccepted, DonationView } from './donation-schemas';
import {
  CampaignIdAttribute,
  DonationStatusAttribute,
  ProviderAttribute,
} from '../../workflows/search-attributes';
import type { donationWorkflow, DonationState } from '../../workflows';
import type { Donation } from './donation';

export interface DonationServiceDeps {
  temporal: Client;
  campaigns: CampaignRepository;
  donations: DonationRepository;
  taskQueue: string;
  provider: string;
  paymentTimeoutSeconds: number;
  /** How long the edge waits on Temporal before answering 503. */
  temporalTimeoutMs: number;
}

/** The workflow ID of a donation; operators see it in the Temporal UI. */
export function donationWorkflowId(donationId: string): string {
  return `donation-${donationId}`;
}

/** Starts donations and reads them back; the edge's only way into the donation workflow. */
export class DonationService {
  constructor(private readonly deps: DonationServiceDeps) {}

  /**
   * Checks the request against the campaign (cheap, deterministic refusals are answered here
   * and cached by the idempotency layer), then starts the one workflow for this scope. Starting
   * is idempotent: a running workflow with this ID is returned as is, a closed one is not
   * started again, so two edges that miss each other still start one workflow.
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
      correlationId,
    };
    await this.withTemporal(async () => {
      try {
        await this.deps.temporal.workflow.start<typeof donationWorkflow>('donationWorkflow', {
          workflowId,
          taskQueue: this.deps.taskQueue,
          args: [input],
          workflowIdConflictPolicy: 'USE_EXISTING',
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
          memo: { correlationId, clientId: scope.clientId },
          typedSearchAttributes: [
            { key: CampaignIdAttribute, value: request.campaignId },
            { key: DonationStatusAttribute, value: 'PENDING' },
            { key: ProviderAttribute, value: this.deps.provider },
          ],
        });
      } catch (error) {
        // Closed already: this request was fully handled before; the donation row tells the rest.
        if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      }
    });
    return {
      id: donationId,
      status: 'PENDING',
      campaignId: request.campaignId,
      amount: request.amount,
      currency: request.currency,
      links: { self: `/v1/donations/${donationId}` },
    };
  }

  /** Postgres is the truth; a running workflow adds its live state. */
  async get(id: string, clientId: string | undefined): Promise<DonationView> {
    const donation = await this.deps.donations.findById(id);
    if (!donation || (clientId !== undefined && donation.clientId !== clientId)) {
      throw new AppError('donation-not-found');
    }
    return { ...toView(donation), workflow: await this.liveState(donation.workflowId) };
  }

  private async liveState(workflowId: string): Promise<DonationView['workflow']> {
    try {
      return await this.deps.temporal.connection.withDeadline(Date.now() + 1_000, async () => {
        const handle = this.deps.temporal.workflow.getHandle(workflowId);
        const description = await handle.describe();
        if (description.status.name !== 'RUNNING') return { id: workflowId, running: false };
        const state = await handle.query<DonationState>('getState');
        return { id: workflowId, running: true, state };
      });
    } catch {
      // Temporal is an enrichment here; the answer from Postgres stands on its own.
      return undefined;
    }
  }

  private async withTemporal<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await this.deps.temporal.connection.withDeadline(
        Date.now() + this.deps.temporalTimeoutMs,
        fn,
      );
    } catch (error) {
      throw new AppError('service-unavailable', {
        detail: 'The workflow service is unreachable; retry with the same Idempotency-Key.',
        retryAfter: 2,
        cause: error,
      });
    }
  }
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
