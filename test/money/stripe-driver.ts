/**
 * Stripe as a provider of the money model: galang's Stripe adapter on the loopback stand-in,
 * whose controls play the donor (pay, processing), the Dashboard (refunds) and the bank
 * (refund outcomes, disputes). The endpoint's API version decides the refund events.
 */
import { toStripeAmount } from '../../src/providers/stripe/stripe-amounts';
import { stripeStandinSignature, unix } from '../support/standins/stripe-objects';
import type { StripeStandin } from '../support/standins/stripe';
import type { History, ProviderProfile } from './history';
import type { CaseIds } from './case-ids';
import type {
  CaseProvider,
  OperatorRefundStep,
  ProviderDriver,
  ProviderStep,
} from './provider-driver';
import { poll } from './provider-driver';
import type { Watch } from './provider-driver';
import type { Notifications } from './standin-notifications';

class StripeCase implements CaseProvider {
  private readonly marks = new Map<number, number[]>();
  private intentId = '';

  constructor(
    private readonly stripe: StripeStandin,
    private readonly notifications: Notifications,
    private readonly ids: CaseIds,
  ) {}

  beforeDonation(): void {}

  async payment(timeoutMs: number): Promise<string> {
    const intent = await poll(
      () =>
        [...this.stripe.intents.values()].find(
          (i) => i.metadata.donation_id === this.ids.donationId,
        ),
      timeoutMs,
      'the donation has no PaymentIntent at Stripe',
    );
    this.intentId = intent.id;
    return intent.id;
  }

  stepStarts(at: number): void {
    this.marks.set(at, this.notifications.mark());
  }

  perform(step: ProviderStep): Promise<void> {
    const { stripe, intentId } = this;
    const minor = (amount: number) => toStripeAmount(amount, 'IDR');
    switch (step.kind) {
      case 'payment':
        if (step.to === 'processing') stripe.processing(intentId);
        else if (step.to === 'settled') stripe.pay(intentId);
        else throw new Error(`Stripe documents no move of a PaymentIntent to ${step.to}`);
        break;
      case 'payment-reversed':
        throw new Error('Stripe reverses no settlement');
      case 'provider-fault': {
        const path = {
          read: `GET /v1/payment_intents/${intentId}`,
          cancel: `POST /v1/payment_intents/${intentId}/cancel`,
          refund: 'POST /v1/refunds',
        }[step.call];
        stripe.faults.add(path, { kind: 'status', status: step.status });
        break;
      }
      case 'refund': {
        // A card refund usually succeeds at once: created `succeeded`, an endpoint older than
        // 2024-10-28 hears of it only through charge.refunded (issue 22 item 11).
        const startsAs = step.start === 'succeeded' ? 'succeeded' : 'pending';
        const refund = stripe.dashboardRefund(intentId, minor(step.amount), startsAs);
        this.ids.names.set(step.refund, refund.id);
        if (step.start === 'denied') stripe.failRefund(refund.id);
        break;
      }
      case 'refund-update':
        if (step.to === 'succeeded') stripe.settleRefund(this.named(step.refund));
        else stripe.failRefund(this.named(step.refund));
        break;
      case 'dispute':
        this.ids.names.set(step.dispute, stripe.openDispute(intentId, minor(step.amount)).id);
        break;
      case 'dispute-update':
        if (step.to === 'won') stripe.winDispute(this.named(step.dispute));
        else stripe.loseDispute(this.named(step.dispute));
        break;
    }
    return Promise.resolve();
  }

  beforeOperatorRefund(): void {}

  async afterOperatorRefund(
    step: OperatorRefundStep,
    _at: number,
    timeoutMs: number,
    watch: Watch,
  ) {
    const known = new Set(this.ids.names.values());
    const refund = await poll(
      () => this.stripe.refunds.find((r) => r.payment_intent === this.intentId && !known.has(r.id)),
      timeoutMs,
      'the operator refund never reached Stripe',
      watch,
    );
    this.start(refund.id, step.start);
    return refund.id;
  }

  async redeliver(of: number): Promise<string> {
    const sent = this.notifications.between(
      this.intentId,
      this.marks.get(of) ?? [],
      this.marks.get(of + 1),
    );
    if (sent.length === 0) throw new Error(`step ${of} notified nothing`);
    const answers: string[] = [];
    for (const delivery of sent) {
      const type = (JSON.parse(delivery.delivery.body) as { type: string }).type;
      answers.push(`${type} ${await this.notifications.resend(this.intentId, delivery)}`);
    }
    return `redelivered ${answers.join(', ')}`;
  }

  /** Stand-in refunds start pending: a history's `succeeded` or `denied` start ends it now. */
  private start(refundId: string, start: OperatorRefundStep['start']): void {
    if (start === 'succeeded') this.stripe.settleRefund(refundId);
    if (start === 'denied') this.stripe.failRefund(refundId);
  }

  private named(name: string): string {
    const id = this.ids.names.get(name);
    if (!id) throw new Error(`${name} was never made`);
    return id;
  }
}

export class StripeDriver implements ProviderDriver {
  readonly method = 'card';

  constructor(
    readonly profile: ProviderProfile,
    private readonly stripe: StripeStandin,
    private readonly notifications: Notifications,
  ) {}

  /** Headers of a new attempt: Stripe signs each one afresh, with its own timestamp. */
  static headers(secret: string) {
    return (delivery: { body: string }) => ({
      'content-type': 'application/json; charset=utf-8',
      'stripe-signature': stripeStandinSignature(secret, unix(), delivery.body),
    });
  }

  forCase(ids: CaseIds, _history: History): StripeCase {
    return new StripeCase(this.stripe, this.notifications, ids);
  }

  inFlight(ids: CaseIds): number {
    return ids.providerReference ? this.notifications.inFlight(ids.providerReference) : 0;
  }

  state(ids: CaseIds): unknown {
    const pi = ids.providerReference ?? '';
    return [
      this.stripe.intent(pi)?.status,
      this.stripe.refunds.filter((r) => r.payment_intent === pi),
      this.stripe.disputes.filter((d) => d.payment_intent === pi),
    ];
  }

  private intentsOf(ids: CaseIds) {
    return [...this.stripe.intents.values()].filter(
      (i) => i.metadata.donation_id === ids.donationId,
    );
  }

  charges(ids: CaseIds): number {
    return this.intentsOf(ids).length;
  }

  payments(ids: CaseIds): string[] {
    return this.intentsOf(ids).map((i) => i.id);
  }

  refunds(ids: CaseIds): number {
    return this.stripe.refunds.filter((r) => r.payment_intent === ids.providerReference).length;
  }

  pendingRefunds(ids: CaseIds): string[] {
    return this.stripe.refunds
      .filter((r) => r.payment_intent === ids.providerReference && r.status === 'pending')
      .map((r) => r.id);
  }

  refused(ids: CaseIds) {
    return ids.providerReference ? this.notifications.refused(ids.providerReference) : [];
  }
}
