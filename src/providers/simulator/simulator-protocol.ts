import type {
  DisputeStatus,
  PaymentStatus,
  RefundStatus,
} from '../../../workflows/contracts/provider-events';

/**
 * The simulator's wire format, shared by its server and galang's client for it. It is shaped
 * like a real gateway: create with an Idempotency-Key, read status (with the payment's refunds
 * and disputes), refund many times, signed notifications.
 */
export type SimulatorPaymentStatus =
  | 'pending'
  /** Taken by the bank, not decided yet: a cancel is refused (like Stripe's `processing`). */
  | 'processing'
  | 'settled'
  | 'declined'
  | 'expired'
  | 'canceled';

export type SimulatorRefundStatus = 'pending' | 'succeeded' | 'failed';
export type SimulatorDisputeStatus = 'open' | 'won' | 'lost';

export interface SimulatorRefund {
  id: string;
  payment_id: string;
  status: SimulatorRefundStatus;
  amount: number;
  created_at: string;
}

export interface SimulatorDispute {
  id: string;
  payment_id: string;
  status: SimulatorDisputeStatus;
  amount: number;
  created_at: string;
}

export interface SimulatorPayment {
  id: string;
  reference: string;
  status: SimulatorPaymentStatus;
  amount: number;
  /** What the donor actually paid, when it differs from `amount` (a test of mismatches). */
  paid_amount?: number;
  /** Sum of the refunds that succeeded. */
  refunded_amount: number;
  currency: string;
  method: string;
  action: { type: 'qr'; value: string };
  created_at: string;
  refunds: SimulatorRefund[];
  disputes: SimulatorDispute[];
  /** Created to keep the donor's method for later charges without them. */
  save_method?: boolean;
  /** The kept method (`sm_…`), once a payment that asked to keep it is settled. */
  saved_method?: string;
  /** The kept method this payment charged without the donor. */
  charged_method?: string;
}

interface NotificationData {
  id: string;
  reference: string;
  amount: number;
  currency: string;
  occurred_at: string;
}

/** One notification per state change of a payment, a refund or a dispute. */
export type SimulatorNotification =
  | {
      type: 'payment.updated';
      data: NotificationData & { status: SimulatorPaymentStatus; refunded_amount: number };
    }
  | {
      type: 'refund.updated';
      data: NotificationData & { payment_id: string; status: SimulatorRefundStatus };
    }
  | {
      type: 'dispute.updated';
      data: NotificationData & { payment_id: string; status: SimulatorDisputeStatus };
    };

/**
 * The methods the simulator takes, whether each can be refunded by API (a bank transfer is a
 * virtual account, which Midtrans and Xendit cannot refund either) and whether it can be kept
 * and charged without the donor (a card, as Stripe's; a QR code or a transfer cannot).
 */
export const SIMULATOR_METHODS: Readonly<
  Record<string, { refundable: boolean; keepable: boolean }>
> = {
  qris: { refundable: true, keepable: false },
  bank_transfer: { refundable: false, keepable: false },
  card: { refundable: true, keepable: true },
  ewallet: { refundable: true, keepable: false },
};

/** The answer to a refused request; a refused cancel carries the payment as it stands. */
export interface SimulatorError {
  error: string;
  code: string;
  payment?: SimulatorPayment;
}

export const paymentStatusMap: Record<SimulatorPaymentStatus, PaymentStatus> = {
  pending: 'PENDING',
  processing: 'PENDING',
  settled: 'PAID',
  declined: 'DECLINED',
  expired: 'EXPIRED',
  canceled: 'CANCELED',
};

export const refundStatusMap: Record<SimulatorRefundStatus, RefundStatus> = {
  pending: 'PENDING',
  succeeded: 'SUCCEEDED',
  failed: 'FAILED',
};

export const disputeStatusMap: Record<SimulatorDisputeStatus, DisputeStatus> = {
  open: 'OPEN',
  won: 'WON',
  lost: 'LOST',
};
