import { randomUUID } from 'node:crypto';
import type {
  SimulatorDispute,
  SimulatorDisputeStatus,
  SimulatorNotification,
  SimulatorPayment,
  SimulatorPaymentStatus,
  SimulatorRefund,
  SimulatorRefundStatus,
} from './simulator-protocol';
import { SIMULATOR_METHODS } from './simulator-protocol';

/** A request the simulated gateway refuses, with the HTTP status and code it answers. */
export class SimulatorRefusal extends Error {
  constructor(
    readonly httpStatus: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'SimulatorRefusal';
  }
}

/** What changed, so the server can notify about it. */
export type SimulatorChange =
  | { type: 'payment'; payment: SimulatorPayment }
  | { type: 'refund'; payment: SimulatorPayment; refund: SimulatorRefund }
  | { type: 'dispute'; payment: SimulatorPayment; dispute: SimulatorDispute };

/**
 * Where each status may go. A payment that failed may still settle (a late success the bank
 * reports: galang must never lose it); a settled one stays settled (money goes back by refunds
 * and disputes). A refund that succeeded may still fail, as Stripe's can.
 */
const paymentMoves: Record<SimulatorPaymentStatus, readonly SimulatorPaymentStatus[]> = {
  pending: ['processing', 'settled', 'declined', 'expired', 'canceled'],
  processing: ['settled', 'declined'],
  settled: [],
  declined: ['settled'],
  expired: ['settled'],
  canceled: ['settled'],
};
const refundMoves: Record<SimulatorRefundStatus, readonly SimulatorRefundStatus[]> = {
  pending: ['succeeded', 'failed'],
  succeeded: ['failed'],
  failed: [],
};
const disputeMoves: Record<SimulatorDisputeStatus, readonly SimulatorDisputeStatus[]> = {
  open: ['won', 'lost'],
  won: [],
  lost: [],
};

function allowed<S extends string>(moves: Record<S, readonly S[]>, from: S, to: S, what: string) {
  // Moving to the current status again is a repeated notification, not a change.
  if (from !== to && !moves[from].includes(to)) {
    throw new SimulatorRefusal(409, 'invalid_transition', `${what} cannot go ${from} → ${to}`);
  }
}

/**
 * The simulated gateway's books: payments, each with its refunds and disputes, and the rules
 * of their lifecycles. Every change is reported to `onChange` (the server notifies galang).
 */
export class SimulatedPayments {
  private readonly payments = new Map<string, SimulatorPayment>();
  private readonly refundOwners = new Map<string, string>();
  private readonly disputeOwners = new Map<string, string>();

  constructor(private readonly onChange: (change: SimulatorChange) => void) {}

  add(payment: Omit<SimulatorPayment, 'id' | 'refunded_amount' | 'refunds' | 'disputes'>) {
    const created: SimulatorPayment = {
      id: `sim_${randomUUID()}`,
      ...payment,
      refunded_amount: 0,
      refunds: [],
      disputes: [],
    };
    this.payments.set(created.id, created);
    return created;
  }

  get(id: string): SimulatorPayment | undefined {
    return this.payments.get(id);
  }

  /** Every payment made, in the order they were made: the provider's whole record. */
  all(): SimulatorPayment[] {
    return [...this.payments.values()];
  }

  byReference(reference: string): SimulatorPayment | undefined {
    return [...this.payments.values()].find((p) => p.reference === reference);
  }

  refundById(id: string): { payment: SimulatorPayment; refund: SimulatorRefund } | undefined {
    const payment = this.payments.get(this.refundOwners.get(id) ?? '');
    const refund = payment?.refunds.find((r) => r.id === id);
    return payment && refund ? { payment, refund } : undefined;
  }

  disputeById(id: string): { payment: SimulatorPayment; dispute: SimulatorDispute } | undefined {
    const payment = this.payments.get(this.disputeOwners.get(id) ?? '');
    const dispute = payment?.disputes.find((d) => d.id === id);
    return payment && dispute ? { payment, dispute } : undefined;
  }

  /** The payment, or a 404 refusal. */
  need(id: string): SimulatorPayment {
    const payment = this.payments.get(id);
    if (!payment) throw new SimulatorRefusal(404, 'resource_missing', `no payment ${id}`);
    return payment;
  }

  movePayment(id: string, status: SimulatorPaymentStatus): SimulatorPayment {
    const payment = this.need(id);
    allowed(paymentMoves, payment.status, status, 'a payment');
    payment.status = status;
    this.onChange({ type: 'payment', payment });
    return payment;
  }

  /** Closes an unpaid payment; refused while the bank is processing it or once it is paid. */
  cancel(id: string): SimulatorPayment {
    const payment = this.need(id);
    if (payment.status === 'pending') return this.movePayment(id, 'canceled');
    if (payment.status === 'processing' || payment.status === 'settled') {
      throw new SimulatorRefusal(
        409,
        `payment_${payment.status}`,
        `cannot cancel a ${payment.status} payment`,
      );
    }
    return payment;
  }

  /**
   * What a bank may still dispute: the charge, less disputes not won. Refunds do not reduce it:
   * a cardholder disputes the charge, so a dispute may exceed what is left after refunds.
   */
  disputable(payment: SimulatorPayment): number {
    const held = payment.disputes
      .filter((d) => d.status !== 'won')
      .reduce((sum, d) => sum + d.amount, 0);
    return (payment.paid_amount ?? payment.amount) - held;
  }

  /** What may still be refunded: paid, less refunds not failed (a disputed one refuses refunds). */
  refundable(payment: SimulatorPayment): number {
    const refunding = payment.refunds
      .filter((r) => r.status !== 'failed')
      .reduce((sum, r) => sum + r.amount, 0);
    return (payment.paid_amount ?? payment.amount) - refunding;
  }

  /** A new refund: pending, or failed at once when the bank denies it. */
  refund(paymentId: string, amount: number, denied: boolean): SimulatorRefund {
    const payment = this.need(paymentId);
    if (payment.status !== 'settled') {
      throw new SimulatorRefusal(
        409,
        'payment_not_settled',
        `cannot refund a ${payment.status} payment`,
      );
    }
    if (SIMULATOR_METHODS[payment.method]?.refundable !== true) {
      throw new SimulatorRefusal(
        409,
        'payment_not_refundable',
        `cannot refund a ${payment.method} payment`,
      );
    }
    if (payment.disputes.some((d) => d.status !== 'won')) {
      throw new SimulatorRefusal(409, 'payment_disputed', 'cannot refund a disputed payment');
    }
    if (amount > this.refundable(payment)) {
      throw new SimulatorRefusal(422, 'amount_too_large', 'amount exceeds what is left to refund');
    }
    const refund: SimulatorRefund = {
      id: `sre_${randomUUID()}`,
      payment_id: payment.id,
      status: denied ? 'failed' : 'pending',
      amount,
      created_at: new Date().toISOString(),
    };
    payment.refunds.push(refund);
    this.refundOwners.set(refund.id, payment.id);
    this.onChange({ type: 'refund', payment, refund });
    return refund;
  }

  moveRefund(id: string, status: SimulatorRefundStatus): SimulatorRefund {
    const found = this.refundById(id);
    if (!found) throw new SimulatorRefusal(404, 'resource_missing', `no refund ${id}`);
    const { payment, refund } = found;
    allowed(refundMoves, refund.status, status, 'a refund');
    const before = payment.refunded_amount;
    refund.status = status;
    payment.refunded_amount = payment.refunds
      .filter((r) => r.status === 'succeeded')
      .reduce((sum, r) => sum + r.amount, 0);
    this.onChange({ type: 'refund', payment, refund });
    // The payment's own notification carries the refunded amount whenever it moves.
    if (payment.refunded_amount !== before) this.onChange({ type: 'payment', payment });
    return refund;
  }

  /** A chargeback: the bank takes `amount` (by default all that was not refunded). */
  openDispute(paymentId: string, amount?: number): SimulatorDispute {
    const payment = this.need(paymentId);
    if (payment.status !== 'settled') {
      throw new SimulatorRefusal(
        409,
        'payment_not_settled',
        `cannot dispute a ${payment.status} payment`,
      );
    }
    const disputed = amount ?? this.refundable(payment);
    if (disputed < 1 || disputed > this.disputable(payment)) {
      throw new SimulatorRefusal(422, 'amount_too_large', 'amount exceeds what may be disputed');
    }
    const dispute: SimulatorDispute = {
      id: `sdp_${randomUUID()}`,
      payment_id: payment.id,
      status: 'open',
      amount: disputed,
      created_at: new Date().toISOString(),
    };
    payment.disputes.push(dispute);
    this.disputeOwners.set(dispute.id, payment.id);
    this.onChange({ type: 'dispute', payment, dispute });
    return dispute;
  }

  moveDispute(id: string, status: SimulatorDisputeStatus): SimulatorDispute {
    const found = this.disputeById(id);
    if (!found) throw new SimulatorRefusal(404, 'resource_missing', `no dispute ${id}`);
    allowed(disputeMoves, found.dispute.status, status, 'a dispute');
    found.dispute.status = status;
    this.onChange({ type: 'dispute', ...found });
    return found.dispute;
  }
}

/** The notification for a change; `status` overrides the current one (a stale copy). */
export function notificationFor(
  change: SimulatorChange,
  occurredAt: Date,
  status?: string,
): SimulatorNotification {
  const { payment } = change;
  const common = {
    reference: payment.reference,
    currency: payment.currency,
    occurred_at: occurredAt.toISOString(),
  };
  switch (change.type) {
    case 'payment':
      return {
        type: 'payment.updated',
        data: {
          ...common,
          id: payment.id,
          status: (status as SimulatorPaymentStatus | undefined) ?? payment.status,
          amount: payment.paid_amount ?? payment.amount,
          refunded_amount: payment.refunded_amount,
        },
      };
    case 'refund':
      return {
        type: 'refund.updated',
        data: {
          ...common,
          id: change.refund.id,
          payment_id: payment.id,
          status: (status as SimulatorRefundStatus | undefined) ?? change.refund.status,
          amount: change.refund.amount,
        },
      };
    case 'dispute':
      return {
        type: 'dispute.updated',
        data: {
          ...common,
          id: change.dispute.id,
          payment_id: payment.id,
          status: (status as SimulatorDisputeStatus | undefined) ?? change.dispute.status,
          amount: change.dispute.amount,
        },
      };
  }
}
