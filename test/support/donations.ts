import { randomUUID } from 'node:crypto';
import type { Db } from '../../src/db/database';
import { donationWorkflowId } from '../../workflows/contracts';
import { DonationRepository } from '../../src/donations/donation-repository';
import { LedgerRepository } from '../../src/ledger/ledger-repository';
import type { DonationStatus } from '../../workflows/contracts';
import { CLIENT_SECRET, donationBody, eventually } from './stack';
import type { Stack } from './stack';

/** POSTs a donation as client A, with any extra headers (an `X-Request-Id`, say). */
export function postDonation(
  url: string,
  key: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${url}/v1/donations`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${CLIENT_SECRET}`,
      'idempotency-key': key,
      'content-type': 'application/json',
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

/**
 * Retries like a well-behaved client: the same key and body while the answer is 409 (the first
 * attempt is still running) or 503 (a dependency was slow or away; nothing was kept).
 */
export async function postDonationUntilAccepted(
  url: string,
  key: string,
  body: unknown,
): Promise<Response> {
  for (let attempt = 0; attempt < 40; attempt++) {
    const response = await postDonation(url, key, body);
    if (response.status !== 409 && response.status !== 503) return response;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${key} was never accepted`);
}

/** The idempotency scope client A's key has on the donation route. */
export function clientAScope(key: string) {
  return { clientId: 'client-a', method: 'POST', route: '/v1/donations', key };
}

/** Waits until the donation row has this status. */
export async function waitForStatus(
  stack: Stack,
  donationId: string,
  status: DonationStatus,
  timeoutMs = 30_000,
): Promise<void> {
  await eventually(async () => {
    const row = await stack.db
      .selectFrom('donations')
      .select('status')
      .where('id', '=', donationId)
      .executeTakeFirst();
    return row?.status === status ? true : undefined;
  }, timeoutMs);
}

/** Waits until the donation's workflow has closed, and returns its result. */
export async function workflowResult(stack: Stack, donationId: string): Promise<unknown> {
  return stack.temporal.workflow.getHandle(donationWorkflowId(donationId)).result();
}

/** Every effect of one donation, counted where it lives. */
export async function effectsOf(stack: Stack, donationId: string) {
  const ledger = await stack.db
    .selectFrom('donation_ledger')
    .select(['entry_type', 'amount'])
    .where('donation_id', '=', donationId)
    .orderBy('id')
    .execute();
  const donations = await stack.db
    .selectFrom('donations')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('id', '=', donationId)
    .executeTakeFirstOrThrow();
  const executions = [];
  for await (const e of stack.temporal.workflow.list({
    query: `WorkflowId = '${donationWorkflowId(donationId)}'`,
  })) {
    executions.push(e);
  }
  return {
    donations: donations.n,
    ledger,
    workflows: executions.length,
    charges: stack.simulator.chargeCount(`${donationId}:create`),
  };
}

/** A campaign's total and count as stored. */
export async function totalsOf(stack: Stack, campaignId: string) {
  return stack.db
    .selectFrom('campaign_totals')
    .select(['confirmed_amount', 'donation_count'])
    .where('campaign_id', '=', campaignId)
    .executeTakeFirstOrThrow();
}

/**
 * A donation credited straight through the repository, as the workflow's confirm would: the
 * ledger and the totals move together, so reconciliation (which other test files run on the
 * same database) finds nothing to repair. For tests about reading totals, not taking donations.
 */
export async function creditDonation(db: Db, campaignId: string, amount: number): Promise<void> {
  const donations = new DonationRepository(db);
  const donationId = randomUUID();
  await donations.insert({
    ...donationBody(campaignId, amount),
    donationId,
    clientId: 'client-a',
    idempotencyKey: `credit-${donationId}`,
    workflowId: donationWorkflowId(donationId),
    provider: 'simulator',
    paymentTimeoutSeconds: 60,
    correlationId: donationId,
  });
  await new LedgerRepository(db).confirm(donationId);
}
