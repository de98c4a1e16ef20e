import type { PaymentStatus } from '../../../workflows/payment-event';

/**
 * The simulator's wire format, shared by its server and galang's client for it. It is shaped
 * like a real gateway: create with an Idempotency-Key, read status, signed notifications.
 */
export type SimulatorStatus =
  | 'pending'
  | 'settled'
  | 'declined'
  | 'expired'
  | 'canceled'
  | 'refunded'
  | 'partially_refunded'
  | 'chargeback';

export interface SimulatorPayment {
  id: string;
  reference: string;
  status: SimulatorStatus;
  amount: number;
  /** What the donor actually paid, when it differs from `amount` (a test of mismatches). */
  paid_amount?: number;
  refunded_amount?: number;
  currency: string;
  method: string;
  action: { type: 'qr'; value: string };
  created_at: string;
}

export interface SimulatorNotification {
  type: 'payment.updated';
  data: {
    id: string;
    reference: string;
    status: SimulatorStatus;
    amount: number;
    currency: string;
    occurred_at: string;
  };
}

export const simulatorStatusMap: Record<SimulatorStatus, PaymentStatus> = {
  pending: 'PENDING',
  settled: 'PAID',
  declined: 'DECLINED',
  expired: 'EXPIRED',
  canceled: 'CANCELED',
  refunded: 'REFUNDED',
  partially_refunded: 'PARTIALLY_REFUNDED',
  chargeback: 'CHARGED_BACK',
};
