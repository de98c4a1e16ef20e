/**
 * The simulator's test controls (what the donor, the bank or the provider's dashboard would do)
 * and the operator's routes (refund, close a campaign), as the driver calls them.
 */
import type { PaymentPlan } from '../../src/providers/simulator/simulator-server';
import { OPERATOR_SECRET } from '../support/stack';
import type { PaymentMove, RefundStart } from './history';

/** How the simulator must treat the next refund so that it starts as the history says. */
export const refundPlans: Record<RefundStart, Partial<PaymentPlan>> = {
  pending: { refundOutcome: 'succeeded', refundSettleMs: -1 },
  succeeded: { refundOutcome: 'succeeded', refundSettleMs: 0 },
  denied: { refundOutcome: 'denied' },
};

const paymentActions = {
  processing: 'process',
  settled: 'settle',
  declined: 'decline',
  expired: 'expire',
} as const;

/** The control that moves a payment; a donor's cancel goes through the gateway's own API. */
export function paymentMovePath(paymentId: string, to: PaymentMove): string {
  return to === 'canceled'
    ? `/v1/payments/${paymentId}/cancel`
    : `/test/payments/${paymentId}/${paymentActions[to]}`;
}

/** POSTs to the simulator and returns the object it answers; anything but 2xx throws. */
export async function control<T>(
  simulatorUrl: string,
  path: string,
  body: object = {},
): Promise<T> {
  const response = await fetch(`${simulatorUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`simulator ${path} → ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

/** An operator closes a campaign through the API; throws unless it answers CLOSED. */
export async function closeCampaign(apiUrl: string, campaignId: string): Promise<string> {
  const response = await fetch(`${apiUrl}/v1/campaigns/${campaignId}/close`, {
    method: 'POST',
    headers: { authorization: `Bearer ${OPERATOR_SECRET}` },
  });
  const text = await response.text();
  const status = response.ok ? (JSON.parse(text) as { status?: string }).status : undefined;
  if (status !== 'CLOSED')
    throw new Error(`the campaign was not closed: ${response.status} ${text}`);
  return `POST …/close → ${response.status} ${status}`;
}

/** An operator's refund through the API; answers the status and the body's start. */
export async function postOperatorRefund(
  apiUrl: string,
  donationId: string,
  request: { key: string; body: string },
): Promise<{ status: number; text: string }> {
  const response = await fetch(`${apiUrl}/v1/donations/${donationId}/refunds`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${OPERATOR_SECRET}`,
      'idempotency-key': request.key,
      'content-type': 'application/json',
    },
    body: request.body,
  });
  return { status: response.status, text: await response.text() };
}
