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
  metrics?: Pick<WebhookMetrics, 'unknown' | 'deferred'>;
  /** How long one delivery may wait on Temporal before it is left for the next attempt. */
  signalTimeoutMs?: number;
}

/** Pino's shape (Fastify's logger and the CLI's); the activity adapts Temporal's logger. */
export interface DeliveryLog {
  warn(details: object, message: string): void;
}

export type DeliveryOutcome = 'delivered' | 'unknown-donation' | 'deferred';

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
      if ((await this.deliver(entry, log)) === 'delivered') delivered++;
    }
    return delivered;
  }

  async deliver(entry: InboxEntry, log: DeliveryLog): Promise<DeliveryOutcome> {
    const { id: inboxId, provider, event, donationId } = entry;
    if (!donationId) {
      log.warn({ provider, eventKey: event.eventKey }, 'webhook for unknown donation');
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
          return;
        }
        await this.deps.inbox.markProcessed(inboxId);
      });
      return 'delivered';
    } catch (error) {
      log.warn({ err: error, inboxId }, 'delivery deferred: Temporal unavailable');
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
