import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  log,
  metricMeter,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { DonationActivities } from '../activities/donation-activities';
import type { ReversalActivities } from '../activities/reversal-activities';
import {
  DonationStatusAttribute,
  FailureType,
  getStateQuery,
  paymentActionUpdate,
  paymentEventSignal,
} from './contracts';
import type {
  DonationInput,
  DonationOutcome,
  DonationState,
  DonationStatus,
  FinalFailureStatus,
  PaymentEvent,
  PaymentSnapshot,
} from './contracts';
import { donationWorkflowV1 } from './legacy/donation-workflow-v1';
import { isDecided, reducePayment } from './payment-state';
import { moneyActivity, moneyLocalActivity } from './retry-policies';

/** The patch that introduced the money model of docs/donation-lifecycle.md. */
export const MONEY_V2 = 'money-v2';
/** The patch after which a run's late-payment hand-off follows the ending the row recorded. */
export const ROW_ENDING_DECIDES = 'row-ending-decides';

const { startPayment, fetchPayment, closePayment, confirmDonation, failDonation } =
  proxyLocalActivities<DonationActivities>(moneyLocalActivity);
const { startLatePayment } = proxyActivities<ReversalActivities>(moneyActivity);

/** Endings without money: a success for one of these is a late payment. */
const UNCREDITED: readonly DonationStatus[] = ['EXPIRED', 'CANCELED', 'FAILED', 'NEEDS_REVIEW'];

/** Past the deadline, a payment the provider would not close is checked this long by default. */
const DEFAULT_SETTLE_HORIZON_SECONDS = 24 * 3600;
const MAX_CHECK_INTERVAL_MS = 10 * 60 * 1000;

/**
 * One donation's life: record it and create its payment, wait for the provider, credit it once,
 * or end it without money only when the provider says the payment can no longer succeed.
 * Refunds and disputes are not its business: each has a reversal workflow of its own.
 * The workflow ID derives from the client's idempotency scope. See docs/donation-lifecycle.md.
 */
export async function donationWorkflow(input: DonationInput): Promise<DonationOutcome> {
  if (!patched(MONEY_V2)) return donationWorkflowV1(input);
  const result = await runDonation(input);
  metricMeter
    .createCounter('galang_donation_outcomes', undefined, 'Donation workflows by final status')
    .add(1, { status: result.status });
  log.info('donation workflow finished', { ...result });
  // Let a waiting paymentAction update answer before the workflow closes.
  await condition(allHandlersFinished);
  return result;
}

async function runDonation(input: DonationInput): Promise<DonationOutcome> {
  const state: DonationState = {
    status: 'PENDING',
    providerReference: undefined,
    action: undefined,
    payment: undefined,
    timeline: [],
  };
  let refusal: ApplicationFailure | undefined;
  /** A notification arrived that only the provider's status API may confirm. */
  let unverified = false;
  const note = (event: string, detail?: string) => {
    state.timeline.push({ at: new Date().toISOString(), event, ...(detail ? { detail } : {}) });
  };
  const setStatus = (status: DonationStatus) => {
    state.status = status;
    upsertSearchAttributes([{ key: DonationStatusAttribute, value: status }]);
    note(`status:${status}`);
  };
  const accept = (event: PaymentEvent, source: string) => {
    const next = reducePayment(state.payment, event);
    note(next === state.payment ? `${source}-ignored` : source, event.status);
    state.payment = next;
  };
  const takeUnverified = () => {
    const was = unverified;
    unverified = false;
    return was;
  };
  const decided = () => state.payment !== undefined && isDecided(state.payment.status);
  const paid = () => state.payment?.status === 'PAID';

  /** Notifications that came before the payment existed wait until its reference is known. */
  const early: PaymentEvent[] = [];
  const onPaymentEvent = (event: PaymentEvent) => {
    if (state.providerReference === undefined) {
      early.push(event);
    } else if (event.providerReference !== state.providerReference) {
      note('payment-event-mismatched', event.providerReference);
    } else if (input.verifyPaymentStatus) {
      unverified = true;
      note('payment-event-to-verify', event.status);
    } else {
      accept(event, 'payment-event');
    }
  };
  setHandler(paymentEventSignal, onPaymentEvent);
  setHandler(getStateQuery, () => state);
  setHandler(paymentActionUpdate, async () => {
    await condition(() => state.action !== undefined || refusal !== undefined);
    if (state.action === undefined) throw refusal ?? ApplicationFailure.create({});
    return { donationId: input.donationId, status: state.status, action: state.action };
  });

  const started = await startPayment(input);
  if (started.kind === 'refused') {
    refusal = ApplicationFailure.nonRetryable(
      `Donation refused: ${started.reason}`,
      started.failureType,
    );
    setStatus('FAILED');
    return { donationId: input.donationId, status: 'FAILED', credited: false };
  }
  if (started.kind === 'decided') {
    // Decided before: by an earlier run (an operator's reset) or a workflow whose history is gone.
    refusal = ApplicationFailure.nonRetryable(
      'Donation already decided',
      FailureType.AlreadyDecided,
    );
    setStatus(started.status);
    // A success that reached this run before it found the donation decided (a reset of a
    // closed donation, say) is a late payment: its workflow verifies and credits it.
    const reference = started.providerReference;
    const paid = early.find((e) => e.status === 'PAID' && e.providerReference === reference);
    if (reference && paid && UNCREDITED.includes(started.status)) {
      await startLatePayment({
        ...paymentRef(input, reference),
        event: paid,
        amount: input.amount,
        currency: input.currency,
      });
    }
    return { donationId: input.donationId, status: started.status, credited: false };
  }
  const reference = started.providerReference;
  state.action = started.action;
  state.providerReference = reference;
  setStatus('AWAITING_PAYMENT');
  early.splice(0).forEach(onPaymentEvent);

  const ask = async (): Promise<PaymentSnapshot> => {
    const truth = await fetchPayment(input.provider, reference);
    accept(eventFrom(truth, 'status'), 'provider-status');
    return truth;
  };
  const finish = async (status: FinalFailureStatus, reason: string): Promise<DonationOutcome> => {
    const recorded = await failDonation(input.donationId, status, reason);
    setStatus(recorded);
    if (status === 'NEEDS_REVIEW') {
      metricMeter
        .createCounter('galang_donations_needs_review', undefined, 'Donations left to operators')
        .add(1, { reason });
    }
    const payment = state.payment;
    // An earlier run may have ended the row first (a reset raced the ending): the row's ending
    // decides, so a success that run never saw still goes to its late payment.
    const ending = recorded !== status && patched(ROW_ENDING_DECIDES) ? recorded : status;
    if (ending !== 'NEEDS_REVIEW' && payment?.status === 'PAID') {
      // A success raced the ending: the late-payment workflow verifies and credits it.
      await startLatePayment({
        ...paymentRef(input, reference),
        event: payment,
        amount: input.amount,
        currency: input.currency,
      });
    }
    return { donationId: input.donationId, status: state.status, credited: false };
  };
  const settle = async (): Promise<DonationOutcome> => {
    const payment = state.payment;
    switch (payment?.status) {
      case 'PAID': {
        if (payment.amount !== input.amount || payment.currency !== input.currency) {
          return finish(
            'NEEDS_REVIEW',
            `paid ${payment.amount} ${payment.currency}, expected ${input.amount} ${input.currency}`,
          );
        }
        // `late`: a step of this workflow may have closed the row already (a local activity whose
        // task was retried because this PAID arrived), and the workflow owns its own payment.
        const confirmed = await confirmDonation(input.donationId, true);
        setStatus(confirmed.status);
        return { donationId: input.donationId, status: state.status, credited: confirmed.credited };
      }
      case 'DECLINED':
        return finish('FAILED', 'payment-declined');
      case 'CANCELED':
        return finish('CANCELED', 'canceled-at-provider');
      default:
        return finish('EXPIRED', 'no-payment-before-deadline');
    }
  };

  const deadline = new Date().getTime() + input.paymentTimeoutSeconds * 1000;
  const untilDeadline = () => Math.max(0, deadline - new Date().getTime());
  while (await condition(() => unverified || decided(), untilDeadline())) {
    if (takeUnverified()) await ask();
    if (decided()) return settle();
  }

  // The webhook may be late or lost: the provider's own answer decides, never the clock alone.
  note('deadline-reached');
  await ask();
  if (decided()) return settle();
  const closed = await closePayment(input.provider, reference);
  accept(eventFrom(closed.payment, 'cancel'), 'cancel');
  // Past the deadline a payment ends credited, declined, or expired (our own cancel included).
  const afterDeadline = () =>
    paid() || state.payment?.status === 'DECLINED'
      ? settle()
      : finish('EXPIRED', 'no-payment-before-deadline');
  if (closed.accepted || decided()) return afterDeadline();
  // The provider would not close it (a payment in processing): it may still succeed.
  const horizon = deadline + (input.settleHorizonSeconds ?? DEFAULT_SETTLE_HORIZON_SECONDS) * 1000;
  let interval = 5_000;
  while (!decided()) {
    const left = horizon - new Date().getTime();
    if (left <= 0) return finish('NEEDS_REVIEW', 'payment-unsettled-after-horizon');
    const woken = await condition(() => unverified || decided(), Math.min(interval, left));
    if (takeUnverified() || !woken) await ask();
    interval = Math.min(interval * 2, MAX_CHECK_INTERVAL_MS);
  }
  return afterDeadline();
}

function paymentRef(input: DonationInput, providerReference: string) {
  return {
    donationId: input.donationId,
    campaignId: input.campaignId,
    provider: input.provider,
    providerReference,
    verifyWithProvider: input.verifyPaymentStatus ?? false,
  };
}

/** A status read, in the shape of a notification, so one reducer folds both. */
export function eventFrom(snapshot: PaymentSnapshot, source: string): PaymentEvent {
  return {
    kind: 'payment',
    eventKey: `${source}:${snapshot.providerReference}:${snapshot.status}`,
    providerReference: snapshot.providerReference,
    status: snapshot.status,
    amount: snapshot.amount,
    currency: snapshot.currency,
    occurredAt: new Date().toISOString(),
  };
}
