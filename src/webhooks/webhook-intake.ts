import { WorkflowNotFoundError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import type { FastifyBaseLogger } from 'fastify';
import { AppError } from '../errors/error-catalogue';
import { WebhookRejected } from '../providers/payment-provider';
import type { ProviderRegistry, WebhookHeaders } from '../providers/payment-provider';
import type { Donation } from '../donations/donation';
import type { DonationRepository } from '../donations/donation-repository';
import { startReversal } from '../donations/reversal-service';
import type { PaymentStatus } from '../../workflows/payment-event';
import { paymentEventSignal } from '../../workflows/donation-workflow';
import type { WebhookInboxRepository } from './webhook-inbox-repository';

export interface WebhookIntakeDeps {
  providers: ProviderRegistry;
  inbox: WebhookInboxRepository;
  donations: DonationRepository;
  temporal: Client;
  taskQueue: string;
  /** How long the request may wait on Temporal before leaving delivery to the redelivery loop. */
  signalTimeoutMs?: number;
}

export type IntakeOutcome = 'delivered' | 'duplicate' | 'unknown-donation' | 'deferred';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Verify, record, then deliver. The inbox insert is the acknowledgement's precondition: once it
 * commits, the event cannot be lost, so a Temporal outage only defers delivery. No provider API
 * is called on this path; it must answer fast under a storm of notifications.
 */
export class WebhookIntake {
  constructor(private readonly deps: WebhookIntakeDeps) {}

  async receive(
    providerName: string,
    rawBody: Buffer,
    headers: WebhookHeaders,
    log: FastifyBaseLogger,
  ): Promise<IntakeOutcome> {
    const provider = this.deps.providers.get(providerName);
    if (!provider) throw new AppError('provider-unknown');
    let event;
    try {
      event = provider.parseWebhook(rawBody, headers);
    } catch (error) {
      if (error instanceof WebhookRejected) {
        throw error.reason === 'signature'
          ? new AppError('webhook-signature-invalid')
          : new AppError('validation-failed', { detail: error.message });
      }
      throw error;
    }

    const donationId = UUID.test(event.donationRef) ? event.donationRef.toLowerCase() : null;
    const donation = donationId ? await this.deps.donations.findById(donationId) : undefined;
    const inboxId = await this.deps.inbox.insert(
      providerName,
      event,
      donation ? donation.id : null,
      rawBody.toString('utf8'),
    );
    if (inboxId === undefined) return 'duplicate';
    if (!donation) {
      log.warn(
        { provider: providerName, eventKey: event.eventKey },
        'webhook for unknown donation',
      );
      await this.deps.inbox.markProcessed(inboxId, 'unknown-donation');
      return 'unknown-donation';
    }

    try {
      await this.deps.temporal.connection.withDeadline(
        Date.now() + (this.deps.signalTimeoutMs ?? 2_000),
        () =>
          this.deps.temporal.workflow.getHandle(donation.workflowId).signal(paymentEventSignal, {
            eventKey: event.eventKey,
            status: event.status,
            amount: event.amount,
            currency: event.currency,
            occurredAt: event.occurredAt,
          }),
      );
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) {
        return this.afterWorkflowClosed(inboxId, donation, event.status, log);
      }
      log.warn({ err: error, inboxId }, 'signal deferred: Temporal unavailable');
      await this.deps.inbox.recordFailure(inboxId, String(error));
      return 'deferred';
    }
    await this.deps.inbox.markProcessed(inboxId);
    return 'delivered';
  }

  /**
   * The donation's workflow has finished. A refund or chargeback the provider reports goes to
   * the donation's reversal workflow (one per kind, by derived ID); anything else is kept in
   * the inbox for operators and reconciliation.
   */
  private async afterWorkflowClosed(
    inboxId: string,
    donation: Donation,
    status: PaymentStatus,
    log: FastifyBaseLogger,
  ): Promise<IntakeOutcome> {
    const kind =
      status === 'REFUNDED' ? 'REFUND' : status === 'CHARGED_BACK' ? 'CHARGEBACK' : undefined;
    if (!kind) {
      await this.deps.inbox.markProcessed(inboxId, 'workflow-closed');
      return 'delivered';
    }
    try {
      const workflowId = await this.deps.temporal.connection.withDeadline(
        Date.now() + (this.deps.signalTimeoutMs ?? 2_000),
        () =>
          startReversal(this.deps.temporal, this.deps.taskQueue, donation, {
            kind,
            amount: donation.amount,
            reason: `provider reported ${status}`,
            source: 'provider',
          }),
      );
      await this.deps.inbox.markProcessed(inboxId, `reversal:${workflowId}`);
      return 'delivered';
    } catch (error) {
      log.warn({ err: error, inboxId }, 'reversal deferred: Temporal unavailable');
      await this.deps.inbox.recordFailure(inboxId, String(error));
      return 'deferred';
    }
  }
}
