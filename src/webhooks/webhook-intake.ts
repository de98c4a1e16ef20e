import { WorkflowNotFoundError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import type { FastifyBaseLogger } from 'fastify';
import { AppError } from '../errors/error-catalogue';
import type { WebhookMetrics } from '../observability/metrics';
import { WebhookRejected } from '../providers/payment-provider';
import type { ProviderRegistry, WebhookEvent, WebhookHeaders } from '../providers/payment-provider';
import { donationWorkflowId } from '../donations/donation';
import type { DonationRepository } from '../donations/donation-repository';
import { startReversal } from '../donations/reversal-service';
import { paymentEventSignal } from '../../workflows/donation-workflow';
import type { InboxEntry, WebhookInboxRepository } from './webhook-inbox-repository';

export interface WebhookIntakeDeps {
  providers: ProviderRegistry;
  inbox: WebhookInboxRepository;
  donations: DonationRepository;
  temporal: Client;
  taskQueue: string;
  metrics: WebhookMetrics;
  /** How long a request may wait on Temporal before leaving delivery to the redelivery loop. */
  signalTimeoutMs?: number;
}

export type IntakeOutcome = 'delivered' | 'duplicate' | 'unknown-donation' | 'deferred';

export interface IntakeResult {
  outcome: IntakeOutcome;
  /** The correlation id of the donation the event is about, for the request's log lines. */
  correlationId: string | undefined;
}

/** Where a delivery came from, as the signal-lag histogram labels it. */
type DeliveryPath = 'request' | 'redelivery';

/**
 * Verify, record, then deliver. The inbox insert is the acknowledgement's precondition: once it
 * commits, the event cannot be lost, so a Temporal outage only defers delivery to
 * {@link WebhookIntake.redeliver}. No provider API is called on this path; it must answer fast
 * under a storm of notifications (Midtrans retries a failed one only once, Xendit not at all).
 */
export class WebhookIntake {
  constructor(private readonly deps: WebhookIntakeDeps) {}

  async receive(
    providerName: string,
    rawBody: Buffer,
    headers: WebhookHeaders,
    log: FastifyBaseLogger,
  ): Promise<IntakeResult> {
    const receivedAt = Date.now();
    const provider = this.deps.providers.get(providerName);
    if (!provider) {
      this.deps.metrics.rejected.inc({ provider: 'unknown', reason: 'provider' });
      throw new AppError('provider-unknown');
    }
    let event: WebhookEvent;
    try {
      event = provider.parseWebhook(rawBody, headers);
    } catch (error) {
      if (!(error instanceof WebhookRejected)) throw error;
      this.deps.metrics.rejected.inc({ provider: providerName, reason: error.reason });
      throw error.reason === 'signature'
        ? new AppError('webhook-signature-invalid')
        : new AppError('validation-failed', { detail: error.message });
    }
    this.deps.metrics.received.inc({ provider: providerName });

    const recorded = await this.deps.inbox.insert(providerName, event, rawBody.toString('utf8'));
    if (!recorded) {
      this.deps.metrics.duplicates.inc({ provider: providerName });
      return { outcome: 'duplicate', correlationId: undefined };
    }
    const correlationId = recorded.correlationId ?? undefined;
    const entry: InboxEntry = {
      id: recorded.id,
      provider: providerName,
      eventKey: event.eventKey,
      donationId: recorded.donationId,
      event,
      correlationId: recorded.correlationId,
      receivedAt: new Date(receivedAt),
    };
    return { outcome: await this.deliver(entry, 'request', log), correlationId };
  }

  /**
   * Delivers inbox rows whose delivery failed (Temporal was away). Run periodically; delivering
   * a row twice is harmless, since the workflow's reducer ignores a repeated event and a
   * reversal workflow's ID admits one run.
   */
  async redeliver(log: FastifyBaseLogger, limit = 100): Promise<number> {
    const entries = await this.deps.inbox.findUndelivered(limit, 2_000);
    let delivered = 0;
    for (const entry of entries) {
      const outcome = await this.deliver(entry, 'redelivery', log);
      if (outcome === 'delivered') delivered++;
    }
    return delivered;
  }

  /**
   * Signals the donation's workflow. Every line logged here carries the donation's correlation
   * id besides this request's own id, so the webhook that completed a donation is found with
   * the rest of the donation's lines.
   */
  private async deliver(
    entry: InboxEntry,
    path: DeliveryPath,
    requestLog: FastifyBaseLogger,
  ): Promise<IntakeOutcome> {
    const { id: inboxId, provider: providerName, event, donationId } = entry;
    const log = entry.correlationId
      ? requestLog.child({ correlationId: entry.correlationId })
      : requestLog;
    if (!donationId) {
      log.warn(
        { provider: providerName, eventKey: event.eventKey },
        'webhook for unknown donation',
      );
      this.deps.metrics.unknown.inc({ provider: providerName });
      await this.deps.inbox.markProcessed(inboxId, 'unknown-donation');
      return 'unknown-donation';
    }
    try {
      await this.withinDeadline(async () => {
        try {
          await this.deps.temporal.workflow
            .getHandle(donationWorkflowId(donationId))
            .signal(paymentEventSignal, {
              eventKey: event.eventKey,
              status: event.status,
              amount: event.amount,
              currency: event.currency,
              occurredAt: event.occurredAt,
            });
        } catch (error) {
          if (!(error instanceof WorkflowNotFoundError)) throw error;
          await this.afterWorkflowClosed(inboxId, donationId, event);
          log.info(
            { provider: providerName, eventKey: event.eventKey, donationId, inboxId },
            'webhook after the donation workflow closed',
          );
          return;
        }
        const lagSeconds = Math.max(0, Date.now() - entry.receivedAt.getTime()) / 1000;
        this.deps.metrics.signalLag.observe({ provider: providerName, path }, lagSeconds);
        log.info(
          {
            provider: providerName,
            eventKey: event.eventKey,
            status: event.status,
            donationId,
            path,
            lagSeconds,
          },
          'webhook signalled to the donation workflow',
        );
        await this.deps.inbox.markProcessed(inboxId);
      });
      return 'delivered';
    } catch (error) {
      log.warn({ err: error, inboxId }, 'delivery deferred: Temporal unavailable');
      this.deps.metrics.deferred.inc({ provider: providerName });
      await this.deps.inbox.recordFailure(inboxId, String(error));
      return 'deferred';
    }
  }

  /**
   * The donation's workflow has finished. A refund or chargeback the provider reports goes to
   * the donation's reversal workflow (one per kind, by derived ID); anything else is kept in
   * the inbox for operators and reconciliation.
   */
  private async afterWorkflowClosed(
    inboxId: string,
    donationId: string,
    event: WebhookEvent,
  ): Promise<void> {
    const kind =
      event.status === 'REFUNDED'
        ? 'REFUND'
        : event.status === 'CHARGED_BACK'
          ? 'CHARGEBACK'
          : undefined;
    const donation = kind ? await this.deps.donations.findById(donationId) : undefined;
    if (!kind || !donation) {
      await this.deps.inbox.markProcessed(inboxId, 'workflow-closed');
      return;
    }
    const workflowId = await startReversal(this.deps.temporal, this.deps.taskQueue, donation, {
      kind,
      amount: donation.amount,
      reason: `provider reported ${event.status}`,
      source: 'provider',
    });
    await this.deps.inbox.markProcessed(inboxId, `reversal:${workflowId}`);
  }

  private withinDeadline<T>(fn: () => Promise<T>): Promise<T> {
    return this.deps.temporal.connection.withDeadline(
      Date.now() + (this.deps.signalTimeoutMs ?? 2_000),
      fn,
    );
  }
}
