/**
 * Workflow and update IDs, all derived from the donation (and the provider's own ids), never
 * from a run: every retry, redelivery, hand-back or double click meets the same execution.
 */

const DONATION_PREFIX = 'donation-';

/** The one workflow of a donation; operators see it in the Temporal UI. */
export function donationWorkflowId(donationId: string): string {
  return `${DONATION_PREFIX}${donationId}`;
}

/** The donation a donation workflow's ID names, or undefined for any other workflow's ID. */
export function donationIdOfWorkflow(workflowId: string): string | undefined {
  return workflowId.startsWith(DONATION_PREFIX) && workflowId.length > DONATION_PREFIX.length
    ? workflowId.slice(DONATION_PREFIX.length)
    : undefined;
}

/** The edge's early-return update: a retried request attaches to the update already running. */
export function paymentActionUpdateId(donationId: string): string {
  return `payment-action-${donationId}`;
}

/** One reversal per provider refund or dispute: its ledger entries are keyed the same way. */
export function reversalWorkflowId(
  donationId: string,
  kind: 'refund' | 'dispute',
  externalId: string,
): string {
  return `reversal-${donationId}-${kind}-${externalId}`;
}

/** One operator refund request; `requestKey` comes from the operator's Idempotency-Key. */
export function refundRequestWorkflowId(donationId: string, requestKey: string): string {
  return `refund-request-${donationId}-${requestKey}`;
}

/** One reading of a payment's record at a time; hints that come meanwhile read it again. */
export function paymentSyncWorkflowId(donationId: string): string {
  return `payment-sync-${donationId}`;
}

/** The one follow-up of a payment that succeeded after its donation was closed. */
export function latePaymentWorkflowId(donationId: string): string {
  return `late-payment-${donationId}`;
}
