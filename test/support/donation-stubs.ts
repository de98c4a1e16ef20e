import { randomUUID } from 'node:crypto';
import { WithStartWorkflowOperation } from '@temporalio/client';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { PaymentStart } from '../../activities/donation-activities';
import { donationStartOptions } from '../../src/donations/donation-start-options';
import {
  WorkflowType,
  donationWorkflowId,
  getStateQuery,
  isClosedWithoutMoney,
  isOpen,
  latePaymentWorkflowId,
  paymentActionUpdate,
} from '../../workflows/contracts';
import type {
  DonationInput,
  DonationStatus,
  DonationWorkflow,
  PaymentActionResult,
  PaymentEvent,
  PaymentStatus,
} from '../../workflows/contracts';
import { recorded, snapshot } from './stub-worker';
import type { Recorded } from './stub-worker';

/** The donation workflow's stub activities and inputs, for the tests in test/workflows/. */
export const REFERENCE = 'pay_wf_1';
export const AMOUNT = 10_000;
export const ACTION = { type: 'qr', value: 'qr-payload' } as const;

/** The provider as the stubs see it: what a status read answers and whether cancel is accepted. */
export interface FakePayment {
  status: PaymentStatus;
  amount: number;
  /** False for a payment in processing: cancel is refused. */
  closable: boolean;
  /** What happens at the provider just before galang's cancel reaches it. */
  beforeClose?: () => void;
  /** What happens at the provider right after galang's cancel is answered. */
  afterClose?: () => void;
}

/**
 * Stubs that keep the donation's row as the repositories do: an ending or a credit is written
 * only while the donation is open (a late credit also on a closed one), the ledger entry once.
 */
export function donationStubs(
  payment: FakePayment,
  start?: PaymentStart,
  /** Holds the first call of each until the promise resolves: a slow write, to race. */
  held: {
    startPayment?: Promise<void>;
    failDonation?: Promise<void>;
    confirmDonation?: Promise<void>;
  } = {},
  /** The row as this run finds it when it ends: another run (before a reset) may have ended it. */
  rowStatus: DonationStatus = 'AWAITING_PAYMENT',
): Recorded {
  const read = (reference: string) => snapshot(reference, payment.status, payment.amount);
  const row = { status: rowStatus, credited: false };
  const open = () => isOpen(row.status);
  const pass = async (name: keyof typeof held) => {
    const hold = held[name];
    held[name] = undefined;
    await hold;
  };
  return recorded({
    startPayment: async () => {
      await pass('startPayment');
      return start ?? { kind: 'created', providerReference: REFERENCE, action: ACTION };
    },
    fetchPayment: async (_provider, reference) => read(reference),
    closePayment: async (_provider, reference) => {
      payment.beforeClose?.();
      const accepted = payment.closable && payment.status === 'PENDING';
      if (accepted) payment.status = 'CANCELED';
      const answer = { accepted, payment: read(reference) };
      payment.afterClose?.();
      return answer;
    },
    confirmDonation: async (_donationId, late = false) => {
      const inserted = !row.credited && (open() || (late && isClosedWithoutMoney(row.status)));
      if (inserted) Object.assign(row, { status: 'CONFIRMED', credited: true });
      await pass('confirmDonation');
      return { status: row.status, credited: row.credited, inserted, campaignId: 'campaign-wf' };
    },
    failDonation: async (_donationId, status) => {
      if (open()) row.status = status;
      await pass('failDonation');
      return row.status;
    },
    startLatePayment: async (input) => latePaymentWorkflowId(input.donationId),
  });
}

export function donationInput(overrides: Partial<DonationInput> = {}): DonationInput {
  const donationId = randomUUID();
  return {
    campaignId: 'campaign-wf',
    amount: AMOUNT,
    currency: 'IDR',
    paymentMethod: 'qris',
    donationId,
    clientId: 'client-wf',
    idempotencyKey: `key-${donationId}`,
    workflowId: donationWorkflowId(donationId),
    provider: 'simulator',
    paymentTimeoutSeconds: 30,
    verifyWithProvider: false,
    settleHorizonSeconds: 86_400,
    correlationId: `req-${donationId}`,
    ...overrides,
  };
}

export function paymentEvent(
  status: PaymentStatus,
  extra: Partial<PaymentEvent> = {},
): PaymentEvent {
  return {
    kind: 'payment',
    eventKey: `evt-${randomUUID()}`,
    providerReference: REFERENCE,
    status,
    amount: AMOUNT,
    currency: 'IDR',
    occurredAt: new Date().toISOString(),
    ...extra,
  };
}

/** A promise the test resolves when it is ready: holds a stub in the middle of its call. */
export function gate() {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** Starts the donation as the edge does: update-with-start, answered with the payment action. */
export async function begin(
  client: Client,
  input: DonationInput,
  taskQueue: string,
  /** A short task timeout has the SDK heartbeat a slow local activity's task sooner. */
  workflowTaskTimeout?: string,
) {
  const startWorkflowOperation = new WithStartWorkflowOperation<DonationWorkflow>(
    WorkflowType.donation,
    {
      ...donationStartOptions(input, taskQueue, { status: 'PENDING' }),
      workflowIdConflictPolicy: 'USE_EXISTING',
      ...(workflowTaskTimeout ? { workflowTaskTimeout } : {}),
    },
  );
  const answer = client.workflow.executeUpdateWithStart<DonationWorkflow, PaymentActionResult, []>(
    paymentActionUpdate,
    { startWorkflowOperation },
  );
  const handle: WorkflowHandle<DonationWorkflow> = await startWorkflowOperation.workflowHandle();
  return { answer, handle };
}

export const timeline = async (handle: WorkflowHandle<DonationWorkflow>) =>
  (await handle.query(getStateQuery)).timeline.map((entry) => entry.event);
