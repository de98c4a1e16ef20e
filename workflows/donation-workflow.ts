import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  defineQuery,
  defineSignal,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { DonationActivities } from '../activities';
import type { DonationStatus } from '../src/db/schema';
import type { DonationInput } from '../src/donations/donation';
import { FailureType, nonRetryableErrorTypes } from './failure-types';
import { isSettled, reducePayment } from './payment-event';
import type { PaymentEvent } from './payment-event';
import { DonationStatusAttribute } from './search-attributes';

/** A provider notification, delivered by the webhook intake. */
export const paymentEventSignal = defineSignal<[PaymentEvent]>('paymentEvent');

export interface DonationState {
  status: DonationStatus;
  providerReference: string | undefined;
  payment: PaymentEvent | undefined;
  /** What happened, in order, including events that were ignored as duplicates or stale. */
  timeline: { at: string; event: string; detail?: string }[];
}

export const getStateQuery = defineQuery<DonationState>('getState');

export interface DonationOutcome {
  donationId: string;
  status: DonationStatus;
  credited: boolean;
}

const { recordDonation, createPayment, fetchPaymentStatus, confirmDonation, failDonation } =
  proxyActivities<DonationActivities>({
    startToCloseTimeout: '30 seconds',
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '1 minute',
      nonRetryableErrorTypes,
    },
  });

/** Cache invalidation is best effort: the TTL bounds staleness if Redis is away. */
const { invalidateCampaignCache } = proxyActivities<DonationActivities>({
  startToCloseTimeout: '5 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 5 },
});

/**
 * One donation's whole life: record, create the payment, wait for the provider, credit exactly
 * once. The workflow ID derives from the client's idempotency scope, so a retried request can
 * never start a second one.
 */
export async function donationWorkflow(input: DonationInput): Promise<DonationOutcome> {
  const state: DonationState = {
    status: 'PENDING',
    providerReference: undefined,
    payment: undefined,
    timeline: [],
  };
  const note = (event: string, detail?: string) => {
    state.timeline.push({ at: new Date().toISOString(), event, ...(detail ? { detail } : {}) });
  };
  const setStatus = (status: DonationStatus) => {
    state.status = status;
    upsertSearchAttributes([{ key: DonationStatusAttribute, value: status }]);
    note(`status:${status}`);
  };

  setHandler(paymentEventSignal, (event) => {
    const next = reducePayment(state.payment, event);
    note(next === state.payment ? 'payment-event-ignored' : 'payment-event', event.status);
    state.payment = next;
  });
  setHandler(getStateQuery, () => state);

  const finish = async (
    status: 'FAILED' | 'EXPIRED' | 'CANCELED' | 'NEEDS_REVIEW',
    reason: string,
  ): Promise<DonationOutcome> => {
    const final = await failDonation(input.donationId, status, reason);
    setStatus(final);
    return { donationId: input.donationId, status: final, credited: false };
  };

  let recorded;
  try {
    recorded = await recordDonation(input);
  } catch (error) {
    if (isFailureOfType(error, FailureType.CampaignClosed, FailureType.Validation)) {
      setStatus('FAILED');
      return { donationId: input.donationId, status: 'FAILED', credited: false };
    }
    throw error;
  }
  if (!recorded.inserted && !['PENDING', 'AWAITING_PAYMENT'].includes(recorded.status)) {
    // Decided before: by an earlier run of this workflow (an operator's reset) or, after
    // Temporal's retention, by a workflow whose history is gone. Nothing is repeated.
    setStatus(recorded.status);
    return { donationId: input.donationId, status: recorded.status, credited: false };
  }

  let providerReference: string;
  try {
    ({ providerReference } = await createPayment(input));
  } catch (error) {
    if (isFailureOfType(error, FailureType.PaymentDeclined, FailureType.Validation)) {
      return finish('FAILED', 'payment-declined');
    }
    throw error;
  }
  state.providerReference = providerReference;
  setStatus('AWAITING_PAYMENT');

  const settled = await condition(
    () => state.payment !== undefined && isSettled(state.payment.status),
    input.paymentTimeoutSeconds * 1000,
  );
  if (!settled) {
    // The webhook may be late or lost: the provider's own answer decides, never the clock alone.
    note('deadline-reached');
    state.payment = reducePayment(
      state.payment,
      await fetchPaymentStatus(input.provider, providerReference),
    );
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
      await invalidateCampaignCache(input.campaignId).catch(() => undefined);
      return {
        donationId: input.donationId,
        status: confirmed.status,
        credited: confirmed.credited,
      };
    }
    case 'DECLINED':
      return finish('FAILED', 'payment-declined');
    case 'CANCELED':
      return finish('CANCELED', 'canceled-at-provider');
    default:
      return finish('EXPIRED', 'no-payment-before-deadline');
  }
}

function isFailureOfType(error: unknown, ...types: string[]): boolean {
  return (
    error instanceof ActivityFailure &&
    error.cause instanceof ApplicationFailure &&
    types.includes(error.cause.type ?? '')
  );
}
