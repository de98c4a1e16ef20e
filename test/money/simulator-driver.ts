/**
 * The simulator as a provider of the money model: its test controls move payments, refunds and
 * disputes (real signed webhooks, through the WebhookRecorder, which also redelivers them).
 */
import type { PaymentPlan, PaymentSimulator } from '../../src/providers/simulator/simulator-server';
import type { SimulatorPayment } from '../../src/providers/simulator/simulator-protocol';
import { LATE_REFUND } from './history';
import type { History, ProviderProfile, RefundStart } from './history';
import type { CaseIds } from './case-ids';
import type {
  CaseProvider,
  OperatorRefundStep,
  ProviderDriver,
  ProviderStep,
  Watch,
} from './provider-driver';
import { poll } from './provider-driver';
import { control, paymentMovePath, refundPlans } from './simulator-control';
import type { WebhookRecorder } from './webhook-recorder';

function finalRefundStatus(start: RefundStart): string {
  return start === 'denied' ? 'failed' : start;
}

class SimulatorCase implements CaseProvider {
  private plan: PaymentPlan;
  private paymentId: string | undefined;
  /** What each notifying step left behind, for a later redelivery of it. */
  private readonly notified = new Map<number, { objectId: string; status: string }>();

  constructor(
    private readonly simulator: PaymentSimulator,
    private readonly simulatorUrl: string,
    private readonly recorder: WebhookRecorder,
    private readonly ids: CaseIds,
    history: History,
  ) {
    this.plan = {
      autoPayMs: -1,
      ...(history.paidAmount !== undefined && { payAmount: history.paidAmount }),
    };
  }

  beforeDonation(): void {
    this.simulator.plan(this.ids.donationId, this.plan);
  }

  payment(): Promise<string> {
    const payment = this.simulator.paymentByReference(this.ids.donationId);
    if (!payment) throw new Error('the donation has no payment at the simulator');
    this.paymentId = payment.id;
    return Promise.resolve(payment.id);
  }

  stepStarts(): void {}

  async perform(step: ProviderStep, at: number, timeoutMs: number): Promise<void> {
    const paymentId = this.paymentId ?? '';
    const set = (name: string, made: { id: string }) => this.ids.names.set(name, made.id);
    switch (step.kind) {
      case 'payment': {
        // galang refunds a late payment to a closed campaign: the simulator answers as told.
        if (step.lateRefund) this.replan(refundPlans[step.lateRefund]);
        const moved = await this.call<SimulatorPayment>(paymentMovePath(paymentId, step.to));
        this.notified.set(at, { objectId: moved.id, status: moved.status });
        if (step.lateRefund) {
          const refund = await poll(
            () => this.simulator.payment(paymentId)?.refunds[0],
            timeoutMs,
            'galang never refunded the late payment to the closed campaign',
          );
          this.ids.names.set(LATE_REFUND, refund.id);
        }
        return;
      }
      case 'payment-reversed':
      case 'provider-fault':
        throw new Error(`the simulator has no ${step.kind}`);
      case 'refund': {
        this.replan(refundPlans[step.start]);
        const refund = await this.call<{ id: string }>(`/test/payments/${paymentId}/refunds`, {
          amount: step.amount,
        });
        set(step.refund, refund);
        this.notified.set(at, { objectId: refund.id, status: finalRefundStatus(step.start) });
        return;
      }
      case 'refund-update': {
        const action = step.to === 'succeeded' ? 'succeed' : 'fail';
        const refund = await this.call<{ id: string; status: string }>(
          `/test/refunds/${this.named(step.refund)}/${action}`,
        );
        this.notified.set(at, { objectId: refund.id, status: refund.status });
        return;
      }
      case 'dispute': {
        const dispute = await this.call<{ id: string; status: string }>(
          `/test/payments/${paymentId}/disputes`,
          { amount: step.amount },
        );
        set(step.dispute, dispute);
        this.notified.set(at, { objectId: dispute.id, status: dispute.status });
        return;
      }
      case 'dispute-update': {
        const action = step.to === 'won' ? 'win' : 'lose';
        const dispute = await this.call<{ id: string; status: string }>(
          `/test/disputes/${this.named(step.dispute)}/${action}`,
        );
        this.notified.set(at, { objectId: dispute.id, status: dispute.status });
        return;
      }
    }
  }

  beforeOperatorRefund(step: OperatorRefundStep): void {
    this.replan(refundPlans[step.start]);
  }

  async afterOperatorRefund(
    step: OperatorRefundStep,
    at: number,
    timeoutMs: number,
    watch: Watch,
  ): Promise<string> {
    const known = new Set(this.ids.names.values());
    const id = await poll(
      () => this.simulator.payment(this.paymentId ?? '')?.refunds.find((r) => !known.has(r.id))?.id,
      timeoutMs,
      'the operator refund never reached the provider',
      watch,
    );
    this.notified.set(at, { objectId: id, status: finalRefundStatus(step.start) });
    return id;
  }

  async redeliver(of: number, mode: 'duplicate' | 'stale'): Promise<string> {
    const target = this.notified.get(of);
    if (!target) throw new Error(`step ${of} notified nothing`);
    const deadline = Date.now() + 10_000;
    for (;;) {
      const webhook = this.recorder.find(target.objectId, target.status);
      if (webhook) {
        const status = await this.recorder.redeliver(webhook, mode);
        return `redelivered ${webhook.type} ${webhook.status}: ${status}`;
      }
      if (Date.now() > deadline)
        throw new Error(`the simulator never sent the notification of step ${of}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  private call<T>(path: string, body: object = {}): Promise<T> {
    return control<T>(this.simulatorUrl, path, body);
  }

  private replan(change: Partial<PaymentPlan>): void {
    this.plan = { ...this.plan, refundOutcome: undefined, refundSettleMs: undefined, ...change };
    this.simulator.plan(this.ids.donationId, this.plan);
  }

  private named(name: string): string {
    const id = this.ids.names.get(name);
    if (!id) throw new Error(`${name} was never made`);
    return id;
  }
}

export class SimulatorDriver implements ProviderDriver {
  constructor(
    readonly profile: ProviderProfile,
    /** The galang payment method of its donations (the profile's). */
    readonly method: string,
    private readonly simulator: PaymentSimulator,
    private readonly simulatorUrl: string,
    private readonly recorder: WebhookRecorder,
  ) {}

  forCase(ids: CaseIds, history: History): SimulatorCase {
    return new SimulatorCase(this.simulator, this.simulatorUrl, this.recorder, ids, history);
  }

  inFlight(ids: CaseIds): number {
    return this.recorder.pending(ids.donationId);
  }

  state(ids: CaseIds): unknown {
    const payment = ids.providerReference
      ? this.simulator.payment(ids.providerReference)
      : undefined;
    return [payment?.status, payment?.refunds, payment?.disputes];
  }

  charges(ids: CaseIds): number {
    return this.simulator.chargeCount(`${ids.donationId}:create`);
  }

  payments(ids: CaseIds): string[] {
    const notified = this.recorder.received.filter(
      (w) => w.reference === ids.donationId && w.type === 'payment.updated',
    );
    return [...new Set(notified.map((w) => w.objectId))];
  }

  refunds(ids: CaseIds): number {
    return ids.providerReference
      ? (this.simulator.payment(ids.providerReference)?.refunds.length ?? 0)
      : 0;
  }

  pendingRefunds(ids: CaseIds): string[] {
    const payment = ids.providerReference
      ? this.simulator.payment(ids.providerReference)
      : undefined;
    return (payment?.refunds ?? []).filter((r) => r.status === 'pending').map((r) => r.id);
  }

  refused(ids: CaseIds): { status: number; body: string }[] {
    return this.recorder.refused
      .filter((r) => r.reference === ids.donationId)
      .map(({ status, body }) => ({ status, body }));
  }
}
