import { WorkflowNotFoundError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import type { WebhookMetrics } from '../observability/metrics';
import type { WebhookEvent } from '../providers/payment-provider';
import { donationWorkflowId } from '../donations/donation';
import type { DonationRepository } from '../donations/donation-repository';
import { startReversal } from '../donations/reversal-service';
import { paymentEventSignal } from '../../workflows/donation-workflow';
import type {
  DeliveryWindow,
  InboxEntry,
  WebhookInboxRepository,
} from './webhook-inbox-repository';

export interface WebhookDeliveryDeps {
  inbox: WebhookInboxRepository;
  donations: DonationRepository;
  temporal: Client;
  taskQueue: string;
  /** The API counts outcomes; the worker and the ops CLI deliver without a registry. */
  metrics?: Pick<WebhookMetrics, 'unknown' | 'deferred' | 'signalLag'>;
  /** How long one delivery may wait on Temporal before it is left for the next attempt. */
  signalTimeoutMs?: number;
}

/** Pino's shape (Fastify's logger and the CLI's); the activity adapts Temporal's logger. */
export interface DeliveryLog {
  warn(details: object, message: string): void;
  info?(details: object, message: string): void;
}

export type DeliveryOutcome = 'delivered' | 'unknown-donation' | 'deferred';

/** Where a delivery came from, as the signal-lag histogram labels it. */
export type DeliveryPath = 'request' | 'redelivery';

/**
 * Hands a recorded inbox row to its donation's workflow. The one delivery path: the webhook
 * route uses it right after the inbox insert, and the API's redelivery loop, reconciliation and
 * `npm run ops -- redeliver` use it for rows whose delivery failed. Delivering a row twice is
 * harmless: the workflow's reducer ignores a repeated event, and a reversal workflow's ID admits
 * one run.
 */
export class WebhookDelivery {
  constructor(private readonly deps: WebhookDeliveryDeps) {}

  /** Rows not delivered yet, within the age window, oldest first. */
  pending(limit: number, window: DeliveryWindow): Promise<InboxEntry[]> {
    return this.deps.inbox.findUndelivered(limit, window);
  }

  /** Delivers the pending rows again; returns how many were delivered now. */
  async redeliver(log: DeliveryLog, limit: number, window: DeliveryWindow): Promise<number> {
    let delivered = 0;
    for (const entry of await this.pending(limit, window)) {
      if ((await this.deliver(entry, log, 'redelivery')) === 'delivered') delivered++;
    }
    return delivered;
  }

  /**
   * Signals the donation's workflow. Every line logged here carries the donation's correlation
   * id, so the webhook that completed a donation is found with the rest of the donation's lines.
   */
  async deliver(
    entry: InboxEntry,
    log: DeliveryLog,
    path: DeliveryPath = 'redelivery',
  ): Promise<DeliveryOutcome> {
    const { id: inboxId, provider, event, donationId } = entry;
    const about = {
      provider,
      eventKey: event.eventKey,
      ...(entry.correlationId ? { correlationId: entry.correlationId } : {}),
    };
    if (!donationId) {
      log.warn(about, 'webhook for unknown donation');
      this.deps.metrics?.unknown.inc({ provider });
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
          log.info?.(
            { ...about, donationId, inboxId },
            'webhook after the donation workflow closed',
          );
          return;
        }
        // Received → signalled, so a slow or stuck Temporal shows before donations expire.
        const lagSeconds = Math.max(0, Date.now() - entry.receivedAt.getTime()) / 1000;
        this.deps.metrics?.signalLag.observe({ provider, path }, lagSeconds);
        log.info?.(
          { ...about, status: event.status, donationId, path, lagSeconds },
          'webhook signalled to the donation workflow',
        );
        await this.deps.inbox.markProcessed(inboxId);
      });
      return 'delivered';
    } catch (error) {
      log.warn({ ...about, err: error, inboxId }, 'delivery deferred: Temporal unavailable');
      this.deps.metrics?.deferred.inc({ provider });
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
