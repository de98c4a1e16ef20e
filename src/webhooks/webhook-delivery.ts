import { WorkflowNotFoundError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import type { WebhookMetrics } from '../observability/metrics';
import type { PaymentHint, ProviderRegistry, WebhookEvent } from '../providers/payment-provider';
import { verifiesWithProvider } from '../providers/provider-verification';
import type { Donation } from '../donations/donation';
import type { DonationRepository } from '../donations/donation-repository';
import type { FollowUpWorkflows, StartedOnce } from '../donations/follow-up-workflows';
import {
  donationWorkflowId,
  isClosedWithoutMoney,
  paymentEventSignal,
  paymentReversalEvent,
} from '../../workflows/contracts';
import type {
  DisputeEvent,
  PaymentEvent,
  PaymentRef,
  ProviderEvent,
  RefundEvent,
} from '../../workflows/contracts';
import { forEachPage } from './webhook-inbox-repository';
import type {
  DeliveryWindow,
  InboxEntry,
  WebhookInboxRepository,
} from './webhook-inbox-repository';

export interface WebhookDeliveryDeps {
  inbox: WebhookInboxRepository;
  donations: DonationRepository;
  providers: ProviderRegistry;
  temporal: Client;
  followUps: FollowUpWorkflows;
  /** The API counts outcomes; the worker and the ops CLI deliver without a registry. */
  metrics?:
    | Pick<WebhookMetrics, 'unknown' | 'mismatched' | 'needsReview' | 'deferred' | 'signalLag'>
    | undefined;
  /** How long one delivery may wait on Temporal before it is left for the next attempt. */
  signalTimeoutMs?: number;
}

/** Pino's shape (Fastify's logger and the CLI's); the activity adapts Temporal's logger. */
export interface DeliveryLog {
  warn(details: object, message: string): void;
  info?(details: object, message: string): void;
}

export type DeliveryOutcome =
  'delivered' | 'unknown-donation' | 'mismatched' | 'ignored' | 'deferred';

/** Where a delivery came from, as the signal-lag histogram labels it. */
export type DeliveryPath = 'request' | 'redelivery';

/**
 * Hands a recorded inbox row to the workflow it is about. The one delivery path: the webhook
 * route uses it right after the inbox insert, and the redelivery loop, reconciliation and
 * `npm run ops -- redeliver` for rows whose delivery failed. Payment events go to the donation's
 * workflow (or, once it has closed without money, a late-payment workflow); refunds and disputes
 * to their own reversal workflow. Delivering a row twice is harmless: every target is keyed by
 * the donation and the provider's ids.
 */
export class WebhookDelivery {
  constructor(private readonly deps: WebhookDeliveryDeps) {}

  /** Rows not delivered yet, within the age window, oldest first. */
  pending(limit: number, window: DeliveryWindow): Promise<InboxEntry[]> {
    return this.deps.inbox.findUndelivered(limit, window);
  }

  /** Delivers every pending row again, `limit` at a time; returns how many were delivered now. */
  async redeliver(log: DeliveryLog, limit: number, window: DeliveryWindow): Promise<number> {
    let delivered = 0;
    await forEachPage(
      limit,
      (after) => this.deps.inbox.findUndelivered(limit, window, after),
      async (entry) => {
        if ((await this.deliver(entry, log, 'redelivery')) === 'delivered') delivered++;
      },
    );
    return delivered;
  }

  /**
   * Delivers one row. Every line logged here carries the donation's correlation id, so the
   * webhook that completed a donation is found with the rest of the donation's lines.
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
    if (event.kind === 'ignored') {
      if (event.needsReview) {
        this.deps.metrics?.needsReview.inc({ provider });
        log.warn({ ...about, inboxId, reason: event.reason }, 'webhook recorded for review');
      }
      await this.deps.inbox.markProcessed(inboxId, `ignored: ${event.reason}`);
      return 'ignored';
    }
    if (!donationId) return this.unbound(entry, event, log, about);
    try {
      const note = await this.withinDeadline(() =>
        event.kind === 'payment'
          ? this.deliverPayment(donationId, event)
          : event.kind === 'hint'
            ? this.deliverHint(donationId, event)
            : this.deliverReversal(donationId, event),
      );
      if (note === 'mismatched') {
        this.deps.metrics?.mismatched.inc({ provider });
        log.warn({ ...about, donationId, inboxId }, 'webhook for another payment of a donation');
        await this.deps.inbox.markProcessed(inboxId, 'mismatched');
        return 'mismatched';
      }
      const lagSeconds = Math.max(0, Date.now() - entry.receivedAt.getTime()) / 1000;
      this.deps.metrics?.signalLag.observe({ provider, path }, lagSeconds);
      log.info?.(
        { ...about, donationId, path, lagSeconds, ...(note ? { note } : {}) },
        note ? 'webhook delivered' : 'webhook signalled to the donation workflow',
      );
      await this.deps.inbox.markProcessed(inboxId, note);
      return 'delivered';
    } catch (error) {
      log.warn({ ...about, err: error, inboxId }, 'delivery deferred: Temporal unavailable');
      this.deps.metrics?.deferred.inc({ provider });
      // The SDK's ServiceError says only which call failed; its cause says why.
      const cause =
        error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
      await this.deps.inbox.recordFailure(inboxId, `${String(error)}${cause}`);
      return 'deferred';
    }
  }

  /**
   * Signals the donation's workflow, which checks the payment reference itself. A PAID for a
   * donation recorded as ended without money starts its late-payment workflow: once the workflow
   * has closed, and also while it is closing, past its last look at the payment (the signal is
   * taken, the workflow never reads it). A DECLINED for a credited donation is the provider
   * taking a settlement back (Midtrans' Reversal Case): it goes to a reversal. Anything else for
   * a closed one stays in the inbox.
   */
  private async deliverPayment(
    donationId: string,
    event: PaymentEvent,
  ): Promise<string | undefined> {
    let closed = false;
    try {
      await this.deps.temporal.workflow
        .getHandle(donationWorkflowId(donationId))
        .signal(paymentEventSignal, event);
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
      closed = true;
    }
    const quiet = closed ? 'workflow-closed' : undefined;
    if (event.status === 'DECLINED')
      return (await this.reverseCredited(donationId, event)) ?? quiet;
    // The late-payment workflow's ID is the one the donation's workflow itself would start.
    const late = await this.startLatePayment(donationId, event);
    if (late === 'mismatched') return closed ? late : undefined;
    return late ? `late-payment:${late.workflowId}` : quiet;
  }

  /** A DECLINED after the credit: the provider reversed the payment, the ledger follows. */
  private async reverseCredited(
    donationId: string,
    event: PaymentEvent,
  ): Promise<string | undefined> {
    const donation = await this.deps.donations.findById(donationId);
    if (!donation?.confirmedAt) return undefined;
    const ref = this.paymentRef(donation, event);
    if (!ref) return 'mismatched';
    return `reversal:${await this.deps.followUps.followReversal(ref, paymentReversalEvent(event))}`;
  }

  /**
   * Starts the late-payment workflow of a recorded PAID whose donation closed without money;
   * its ID when this call started it. Reconciliation calls it for rows whose delivery reached
   * the donation's workflow too late for it to act.
   */
  async applyLatePayment(entry: InboxEntry): Promise<string | undefined> {
    if (entry.event.kind !== 'payment' || !entry.donationId) return undefined;
    const late = await this.startLatePayment(entry.donationId, entry.event);
    return late && late !== 'mismatched' && late.started ? late.workflowId : undefined;
  }

  /** A PAID for a donation closed without money starts its late-payment workflow. */
  private async startLatePayment(
    donationId: string,
    event: PaymentEvent,
  ): Promise<StartedOnce | 'mismatched' | undefined> {
    if (event.status !== 'PAID') return undefined;
    const donation = await this.deps.donations.findById(donationId);
    if (!donation) return undefined;
    const ref = this.paymentRef(donation, event);
    if (!ref) return 'mismatched';
    if (!isClosedWithoutMoney(donation.status) || donation.confirmedAt) return undefined;
    return this.deps.followUps.startLatePayment({
      ...ref,
      event,
      amount: donation.amount,
      currency: donation.currency,
    });
  }

  /** Hands a refund or dispute to its own reversal workflow, whatever the donation is doing. */
  private async deliverReversal(
    donationId: string,
    event: RefundEvent | DisputeEvent,
  ): Promise<string> {
    const donation = await this.deps.donations.findById(donationId);
    const ref = donation && this.paymentRef(donation, event);
    if (!ref) return 'mismatched';
    return `reversal:${await this.deps.followUps.followReversal(ref, event)}`;
  }

  /** A hint has the payment's record read again, whatever the donation is doing. */
  private async deliverHint(donationId: string, event: PaymentHint): Promise<string> {
    const donation = await this.deps.donations.findById(donationId);
    const ref = donation && this.paymentRef(donation, event);
    if (!ref) return 'mismatched';
    return `sync:${await this.deps.followUps.syncPayment(ref)}`;
  }

  /** The payment an event is about, only if it is the donation's own. */
  private paymentRef(
    donation: Donation,
    event: Pick<ProviderEvent, 'providerReference'>,
  ): PaymentRef | undefined {
    if (!donation.providerReference || donation.providerReference !== event.providerReference) {
      return undefined;
    }
    return {
      donationId: donation.id,
      campaignId: donation.campaignId,
      provider: donation.provider,
      providerReference: donation.providerReference,
      verifyWithProvider: verifiesWithProvider(this.deps.providers, donation.provider),
    };
  }

  private async unbound(
    entry: InboxEntry,
    event: WebhookEvent,
    log: DeliveryLog,
    about: object,
  ): Promise<DeliveryOutcome> {
    if (await this.deps.inbox.namesAnotherPayment(event)) {
      this.deps.metrics?.mismatched.inc({ provider: entry.provider });
      log.warn({ ...about, inboxId: entry.id }, 'webhook for another provider or payment');
      await this.deps.inbox.markProcessed(entry.id, 'mismatched');
      return 'mismatched';
    }
    log.warn(about, 'webhook for unknown donation');
    this.deps.metrics?.unknown.inc({ provider: entry.provider });
    await this.deps.inbox.markProcessed(entry.id, 'unknown-donation');
    return 'unknown-donation';
  }

  private withinDeadline<T>(fn: () => Promise<T>): Promise<T> {
    return this.deps.temporal.connection.withDeadline(
      Date.now() + (this.deps.signalTimeoutMs ?? 2_000),
      fn,
    );
  }
}
