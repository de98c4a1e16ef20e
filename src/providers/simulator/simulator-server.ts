import type { FastifyInstance } from 'fastify';
import { SimulatorDelivery } from './simulator-delivery';
import type { PaymentPlan, SimulatorOptions } from './simulator-knobs';
import { GatewayKeys, registerGatewayRoutes } from './simulator-gateway-routes';
import { SimulatedPayments, notificationFor } from './simulator-payments';
import type { SimulatorChange } from './simulator-payments';
import { createSimulatorApp, registerControlRoutes } from './simulator-control-routes';
import { SavedMethods } from './simulator-saved-methods';
import type { SavedMethodState } from './simulator-saved-methods';
import type { SimulatorControls } from './simulator-control-routes';
import type {
  SimulatorDispute,
  SimulatorDisputeStatus,
  SimulatorPayment,
  SimulatorPaymentStatus,
  SimulatorRefund,
  SimulatorRefundStatus,
} from './simulator-protocol';

export type { PaymentPlan, SimulatorKnobs, SimulatorOptions } from './simulator-knobs';

/** The state a final one replaced, for the `reorder` knob's stale copy. */
const staleStatus = {
  settled: 'pending',
  succeeded: 'pending',
  failed: 'pending',
  won: 'open',
  lost: 'open',
};

/**
 * A local stand-in for a hosted payment gateway, on loopback: it creates payments idempotently,
 * counts charges per idempotency key (so tests can assert "charged once"), settles them after a
 * delay (optionally through `processing`), refunds them in parts, takes disputes, and notifies
 * galang of every change with Standard Webhooks signatures, retrying with backoff. Tests drive
 * each transition through its methods or its `/test/…` control endpoints.
 */
export class PaymentSimulator implements SimulatorControls {
  readonly app: FastifyInstance;
  private readonly savedMethods = new SavedMethods();
  private readonly book = new SimulatedPayments((change) => {
    if (change.type === 'payment') this.savedMethods.keep(change.payment);
    this.notify(change);
  });
  private readonly keys = new GatewayKeys();
  private readonly plans = new Map<string, PaymentPlan>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly delivery: SimulatorDelivery;
  private closed = false;
  /** Mutable because a test learns the API's port only after the simulator is listening. */
  webhookUrl: string;

  constructor(private readonly options: SimulatorOptions) {
    this.webhookUrl = options.webhookUrl;
    this.delivery = new SimulatorDelivery({
      webhookSecret: options.webhookSecret,
      maxDeliveryAttempts: options.maxDeliveryAttempts ?? 16,
      url: () => this.webhookUrl,
      sleep: (ms) => this.sleep(ms),
      closed: () => this.closed,
    });
    const app = createSimulatorApp();
    registerGatewayRoutes(app, {
      book: this.book,
      keys: this.keys,
      savedMethods: this.savedMethods,
      knobs: (reference) => this.knobs(reference),
      sleep: (ms) => this.sleep(ms),
      autoPay: (payment, plan) => {
        this.autoPay(payment, plan);
      },
      makeRefund: (payment, amount) => this.makeRefund(payment, amount),
    });
    registerControlRoutes(app, this);
    this.app = app;
  }

  /** How many payments were created under this idempotency key (1 is the only right answer). */
  chargeCount(idempotencyKey: string): number {
    return this.keys.charges.get(idempotencyKey) ?? 0;
  }

  /** How many refunds were made under this idempotency key. */
  refundCount(idempotencyKey: string): number {
    return this.keys.refundCounts.get(idempotencyKey) ?? 0;
  }

  payment(id: string): SimulatorPayment | undefined {
    return this.book.get(id);
  }

  payments(): SimulatorPayment[] {
    return this.book.all();
  }

  paymentByReference(reference: string): SimulatorPayment | undefined {
    return this.book.byReference(reference);
  }

  /** Plans the behaviour of the payment that will carry this reference (our donation id). */
  plan(reference: string, plan: PaymentPlan): void {
    this.plans.set(reference, plan);
  }

  /**
   * Forgets every idempotency key, as a gateway does once its window has passed (Stripe keeps
   * keys 24 hours): a repeated request then makes a new payment or refund. Counts are kept.
   */
  forgetIdempotencyKeys(): void {
    this.keys.forget();
  }

  async listen(port: number, host = '127.0.0.1'): Promise<string> {
    return this.app.listen({ port, host });
  }

  /**
   * Moves a payment as the donor or the bank would, and notifies galang; the same status again
   * sends a fresh notification. Throws a {@link SimulatorRefusal} for a move the lifecycle forbids.
   */
  transition(id: string, status: SimulatorPaymentStatus): SimulatorPayment {
    return this.book.movePayment(id, status);
  }

  /** A refund made at the provider (its dashboard), not through galang; settles per the plan. */
  refundAtProvider(paymentId: string, amount: number): SimulatorRefund {
    return this.makeRefund(this.book.need(paymentId), amount);
  }

  /** Ends a pending refund, or fails one that succeeded (its money comes back). */
  settleRefund(
    refundId: string,
    status: Exclude<SimulatorRefundStatus, 'pending'>,
  ): SimulatorRefund {
    return this.book.moveRefund(refundId, status);
  }

  /** The bank takes the money back: `amount` defaults to all that was not refunded. */
  openDispute(paymentId: string, amount?: number): SimulatorDispute {
    return this.book.openDispute(paymentId, amount);
  }

  closeDispute(
    disputeId: string,
    status: Exclude<SimulatorDisputeStatus, 'open'>,
  ): SimulatorDispute {
    return this.book.moveDispute(disputeId, status);
  }

  /** How a kept method answers its next charge (the donor's bank, as a test plays it). */
  setSavedMethod(id: string, state: SavedMethodState): { id: string; state: SavedMethodState } {
    return this.savedMethods.set(id, state);
  }

  /** How the next charges of a kept method answer, one each, before its state applies again. */
  queueSavedMethod(id: string, states: readonly SavedMethodState[]): void {
    this.savedMethods.queue(id, states);
  }

  /** The next release of a kept method answers 503, as an outage would. */
  failNextSavedMethodRelease(id: string): void {
    this.savedMethods.failNextRelease(id);
  }

  /** Whether galang released a kept method (a pledge let it go). */
  savedMethodReleased(id: string): boolean {
    return this.savedMethods.wasReleased(id);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    await this.app.close();
  }

  private makeRefund(payment: SimulatorPayment, amount: number): SimulatorRefund {
    const plan = this.knobs(payment.reference);
    const outcome = plan.refundOutcome ?? 'succeeded';
    const refund = this.book.refund(payment.id, amount, outcome === 'denied');
    const settleMs = plan.refundSettleMs ?? 0;
    if (outcome !== 'denied' && settleMs >= 0) {
      this.later(settleMs, () => {
        if (refund.status === 'pending') this.book.moveRefund(refund.id, outcome);
      });
    }
    return refund;
  }

  private autoPay(payment: SimulatorPayment, plan: PaymentPlan): void {
    const autoPayMs = plan.autoPayMs ?? this.options.autoPayMs;
    if (autoPayMs < 0) return;
    this.later(autoPayMs, () => {
      if (payment.status !== 'pending') return;
      if (plan.processingMs === undefined) {
        this.book.movePayment(payment.id, 'settled');
        return;
      }
      this.book.movePayment(payment.id, 'processing');
      const processingMs = plan.processingMs;
      if (processingMs >= 0) {
        this.later(processingMs, () => {
          if (payment.status === 'processing') this.book.movePayment(payment.id, 'settled');
        });
      }
    });
  }

  /** The knobs for one payment: the run's, overridden by its plan. */
  private knobs(reference: string | undefined): PaymentPlan {
    return { ...this.options, ...(reference ? this.plans.get(reference) : undefined) };
  }

  /** Builds the message now (state moves on), then delivers it with the planned adversity. */
  private notify(change: SimulatorChange): void {
    const now = new Date();
    const current = notificationFor(change, now);
    const status = current.data.status;
    const stale = Object.hasOwn(staleStatus, status)
      ? notificationFor(
          change,
          new Date(now.getTime() - 60_000),
          staleStatus[status as keyof typeof staleStatus],
        )
      : undefined;
    void this.delivery.send(this.knobs(change.payment.reference), current, stale);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.later(ms, resolve);
    });
  }

  private later(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    this.timers.add(timer);
  }
}
