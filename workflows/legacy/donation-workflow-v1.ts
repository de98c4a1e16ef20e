import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  condition,
  defineQuery,
  defineSignal,
  defineUpdate,
  log,
  metricMeter,
  patched,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { LegacyActivities } from '../../activities/legacy-activities';
import * as contracts from '../contracts';
import { DonationStatusAttribute, FailureType } from '../contracts';
import { cacheActivity, moneyActivity } from '../retry-policies';
import type { DonationInput, DonationStatus, PaymentAction } from '../contracts';
import { isSettled, reducePayment } from './payment-event-v1';
import type {
  PaymentEventV1 as PaymentEvent,
  PaymentStatusV1 as PaymentStatus,
} from '../contracts';

/**
 * The donation workflow as it ran before money-v2, kept so that workflows started by it finish
 * the way they began (and their recorded histories replay). Remove once none run.
 */
const paymentEventSignal = defineSignal<[PaymentEvent]>(contracts.paymentEventSignal.name);

interface DonationState {
  status: DonationStatus;
  providerReference: string | undefined;
  action: PaymentAction | undefined;
  payment: PaymentEvent | undefined;
  /** What happened, in order, including events that were ignored as duplicates or stale. */
  timeline: { at: string; event: string; detail?: string }[];
}

const getStateQuery = defineQuery<DonationState>(contracts.getStateQuery.name);

interface PaymentActionResult {
  donationId: string;
  status: DonationStatus;
  action: PaymentAction;
}

/**
 * The edge's early return: completes as soon as the provider has created the payment, with what
 * the donor must do to pay. Fails with the activity's typed failure if creation was refused.
 */
const paymentActionUpdate = defineUpdate<PaymentActionResult>(contracts.paymentActionUpdate.name);

interface DonationOutcome {
  donationId: string;
  status: DonationStatus;
  credited: boolean;
}

const {
  recordDonation,
  createPayment,
  fetchPaymentStatus,
  cancelPayment,
  confirmDonation,
  recordReversal,
  failDonation,
} = proxyActivities<LegacyActivities>(moneyActivity);

const { invalidateCampaignCache } = proxyActivities<LegacyActivities>(cacheActivity);

const REVERSALS: Partial<Record<PaymentStatus, 'REFUND' | 'CHARGEBACK'>> = {
  REFUNDED: 'REFUND',
  PARTIALLY_REFUNDED: 'REFUND',
  CHARGED_BACK: 'CHARGEBACK',
};

/** One donation's whole life, as v1 ran it. */
export async function donationWorkflowV1(input: DonationInput): Promise<DonationOutcome> {
  const result = await runDonation(input);
  reportOutcome(result);
  // Let a waiting paymentAction update answer before the workflow closes.
  await condition(allHandlersFinished);
  return result;
}

/**
 * Counts the donation's final status on the worker's metrics endpoint (with the SDK's own
 * metrics) and logs it. Both go through sinks that stay silent while a history is replayed,
 * so neither affects determinism nor counts a donation twice.
 */
function reportOutcome(result: DonationOutcome): void {
  metricMeter
    .createCounter('galang_donation_outcomes', undefined, 'Donation workflows by final status')
    .add(1, { status: result.status });
  log.info('donation workflow finished', {
    donationId: result.donationId,
    status: result.status,
    credited: result.credited,
  });
}

async function runDonation(input: DonationInput): Promise<DonationOutcome> {
  const state: DonationState = {
    status: 'PENDING',
    providerReference: undefined,
    action: undefined,
    payment: undefined,
    timeline: [],
  };
  let creationFailure: ApplicationFailure | undefined;
  const note = (event: string, detail?: string) => {
    state.timeline.push({ at: new Date().toISOString(), event, ...(detail ? { detail } : {}) });
  };
  const setStatus = (status: DonationStatus) => {
    state.status = status;
    upsertSearchAttributes([{ key: DonationStatusAttribute, value: status }]);
    note(`status:${status}`);
  };
  const outcome = (status: DonationStatus, credited = false): DonationOutcome => ({
    donationId: input.donationId,
    status,
    credited,
  });

  setHandler(paymentEventSignal, (event) => {
    const next = reducePayment(state.payment, event);
    note(next === state.payment ? 'payment-event-ignored' : 'payment-event', event.status);
    state.payment = next;
  });
  setHandler(getStateQuery, () => state);
  setHandler(paymentActionUpdate, async () => {
    await condition(() => state.action !== undefined || creationFailure !== undefined);
    if (state.action === undefined) throw creationFailure ?? ApplicationFailure.create({});
    return { donationId: input.donationId, status: state.status, action: state.action };
  });

  const finish = async (
    status: 'FAILED' | 'EXPIRED' | 'CANCELED' | 'NEEDS_REVIEW',
    reason: string,
  ): Promise<DonationOutcome> => {
    setStatus(await failDonation(input.donationId, status, reason));
    return outcome(state.status);
  };

  let recorded;
  try {
    recorded = await recordDonation(input);
  } catch (error) {
    creationFailure = failureOfType(error, FailureType.CampaignClosed, FailureType.Validation);
    if (!creationFailure) throw error;
    setStatus('FAILED');
    return outcome('FAILED');
  }
  if (!recorded.inserted && !['PENDING', 'AWAITING_PAYMENT'].includes(recorded.status)) {
    // Decided before: by an earlier run of this workflow (an operator's reset) or, after
    // Temporal's retention, by a workflow whose history is gone. Nothing is repeated.
    setStatus(recorded.status);
    creationFailure = ApplicationFailure.nonRetryable('Donation already decided', 'AlreadyDecided');
    return outcome(recorded.status);
  }

  let providerReference: string;
  try {
    const created = await createPayment(input);
    providerReference = created.providerReference;
    state.action = created.action;
  } catch (error) {
    creationFailure = failureOfType(error, FailureType.PaymentDeclined, FailureType.Validation);
    if (!creationFailure) throw error;
    const declined = creationFailure.type === FailureType.PaymentDeclined;
    return finish('FAILED', declined ? 'payment-declined' : 'provider-refused');
  }
  state.providerReference = providerReference;
  setStatus('AWAITING_PAYMENT');

  const settled = await waitForPayment(input, state, providerReference, note);
  if (!settled) {
    // The webhook may be late or lost: the provider's own answer decides, never the clock alone.
    note('deadline-reached');
    state.payment = reducePayment(
      state.payment,
      await fetchPaymentStatus(input.provider, providerReference),
    );
    if (!state.payment || !isSettled(state.payment.status)) {
      // Still unpaid: close the payment at the provider first, so it cannot be paid after we
      // give up. If it was paid in the meantime, the provider says so and we credit it.
      state.payment = reducePayment(
        state.payment,
        await cancelPayment(input.provider, providerReference),
      );
    }
  }

  const payment = state.payment;
  switch (payment?.status) {
    case 'PAID':
    case 'PARTIALLY_REFUNDED':
    case 'REFUNDED':
    case 'CHARGED_BACK': {
      if (payment.amount !== input.amount || payment.currency !== input.currency) {
        return finish(
          'NEEDS_REVIEW',
          `paid ${payment.amount} ${payment.currency}, expected ${input.amount} ${input.currency}`,
        );
      }
      const confirmed = await confirmDonation(input.donationId);
      setStatus(confirmed.status);
      const reversal = REVERSALS[payment.status];
      if (reversal && patched('reverse-after-confirm')) {
        // Refunded or charged back before we even confirmed: credit, then reverse, so the
        // ledger tells the whole story.
        setStatus((await recordReversal(input.donationId, reversal, input.amount)).status);
      }
      await invalidateCampaignCache(input.campaignId).catch(() => undefined);
      return outcome(state.status, confirmed.credited);
    }
    case 'DECLINED':
      return finish('FAILED', 'payment-declined');
    case 'CANCELED':
      return finish(
        settled ? 'CANCELED' : 'EXPIRED',
        settled ? 'canceled-at-provider' : 'no-payment-before-deadline',
      );
    default:
      return finish('EXPIRED', 'no-payment-before-deadline');
  }
}

/**
 * Waits until the payment leaves PENDING or the deadline passes; returns false at the deadline.
 * For providers whose notifications cannot prove themselves, a paid event is checked against
 * the provider's status API first: an unconfirmed one is noted and the wait goes on.
 */
async function waitForPayment(
  input: DonationInput,
  state: DonationState,
  providerReference: string,
  note: (event: string, detail?: string) => void,
): Promise<boolean> {
  const deadline = new Date().getTime() + input.paymentTimeoutSeconds * 1000;
  for (;;) {
    const settled = await condition(
      () => state.payment !== undefined && isSettled(state.payment.status),
      Math.max(0, deadline - new Date().getTime()),
    );
    if (!settled || !input.verifyPaymentStatus || state.payment?.status !== 'PAID') return settled;
    const truth = await fetchPaymentStatus(input.provider, providerReference);
    if (isSettled(truth.status)) {
      state.payment = truth;
      return true;
    }
    note('unconfirmed-notification', truth.status);
    state.payment = truth;
  }
}

function failureOfType(error: unknown, ...types: string[]): ApplicationFailure | undefined {
  if (
    error instanceof ActivityFailure &&
    error.cause instanceof ApplicationFailure &&
    types.includes(error.cause.type ?? '')
  ) {
    return ApplicationFailure.nonRetryable(error.cause.message, error.cause.type);
  }
  return undefined;
}
