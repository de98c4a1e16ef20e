import type { FastifyBaseLogger } from 'fastify';
import { AppError } from '../errors/error-catalogue';
import type { WebhookMetrics } from '../observability/metrics';
import { WebhookRejected } from '../providers/payment-provider';
import type { ProviderRegistry, WebhookEvent, WebhookHeaders } from '../providers/payment-provider';
import type { DeliveryOutcome, WebhookDelivery } from './webhook-delivery';
import type { InboxEntry, WebhookInboxRepository } from './webhook-inbox-repository';

export interface WebhookIntakeDeps {
  providers: ProviderRegistry;
  inbox: WebhookInboxRepository;
  delivery: WebhookDelivery;
  /** The API counts what it receives; other processes never take webhooks. */
  metrics?: WebhookMetrics | undefined;
  /**
   * Rows older than this are left to reconciliation (and operators), so a row whose delivery
   * keeps failing is not retried every few seconds by every API process forever. Unset while
   * reconciliation is disabled.
   */
  redeliveryMaxAgeMs?: number | undefined;
}

export type IntakeOutcome = DeliveryOutcome | 'duplicate';

/** Rows younger than this are still in their own request; the redelivery loop leaves them. */
const REDELIVERY_MIN_AGE_MS = 2_000;

export interface IntakeResult {
  outcome: IntakeOutcome;
  /** The correlation id of the donation the event is about, for the request's log lines. */
  correlationId: string | undefined;
}

/**
 * Verify, record, then deliver. The inbox insert is the acknowledgement's precondition: once it
 * commits, the event cannot be lost, so a Temporal outage only defers delivery to
 * {@link WebhookIntake.redeliver}. No provider API is called on this path; it must answer fast
 * under a storm of notifications. Events galang has no use for are recorded and answered 200 too,
 * so the provider stops retrying them.
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
      this.deps.metrics?.rejected.inc({ provider: 'unknown', reason: 'provider' });
      throw new AppError('provider-unknown');
    }
    let event: WebhookEvent;
    try {
      event = provider.parseWebhook(rawBody, headers);
    } catch (error) {
      if (!(error instanceof WebhookRejected)) throw error;
      this.deps.metrics?.rejected.inc({ provider: providerName, reason: error.reason });
      throw error.reason === 'signature'
        ? new AppError('webhook-signature-invalid')
        : new AppError('validation-failed', { detail: error.message });
    }
    this.deps.metrics?.received.inc({ provider: providerName });

    const recorded = await this.deps.inbox.insert(providerName, event, rawBody.toString('utf8'));
    if (!recorded) {
      this.deps.metrics?.duplicates.inc({ provider: providerName });
      return { outcome: 'duplicate', correlationId: undefined };
    }
    const entry: InboxEntry = {
      id: recorded.id,
      provider: providerName,
      eventKey: event.eventKey,
      donationId: recorded.donationId,
      event,
      correlationId: recorded.correlationId,
      receivedAt: new Date(receivedAt),
    };
    return {
      outcome: await this.deps.delivery.deliver(entry, log, 'request'),
      correlationId: recorded.correlationId ?? undefined,
    };
  }

  /** Counts a request the route refused before reading it: too large, or too many at once. */
  refused(providerName: string, reason: 'too-large' | 'busy'): void {
    this.deps.metrics?.rejected.inc({ provider: providerName, reason });
  }

  /**
   * Delivers inbox rows whose delivery failed (Temporal was away). Run periodically by every API
   * process; see {@link WebhookDelivery}.
   */
  redeliver(log: FastifyBaseLogger, limit = 100): Promise<number> {
    return this.deps.delivery.redeliver(log, limit, {
      olderThanMs: REDELIVERY_MIN_AGE_MS,
      newerThanMs: this.deps.redeliveryMaxAgeMs,
    });
  }
}
