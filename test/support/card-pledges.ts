import { randomUUID } from 'node:crypto';
import { WorkflowType, pledgePeriodWorkflowId } from '../../workflows/contracts';
import type { PledgePeriodWorkflow } from '../../workflows/contracts';
import type { CardStack } from './card-stacks';
import { CLIENT_SECRET, eventually } from './stack';

export interface PledgeAnswer {
  pledge: { id: string; links: { manage: string } };
  firstDonation: { id: string };
}

/** A month and a bit: `ahead(n)` falls in the n-th period from now. */
const MONTH_MS = 32 * 86_400_000;

/**
 * What the pledge tests do on a card stack: pledge, pay the first period, run a period. Takes
 * getters, so a describe block builds it before its beforeAll starts the stack.
 */
export function cardPledges(card: () => CardStack, campaignId: () => string) {
  const stack = () => card().mail.stack;
  const pledgeRow = (id: string) =>
    stack().db.selectFrom('pledges').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const referenceOf = (donationId: string) =>
    eventually(async () => {
      const row = await stack()
        .db.selectFrom('donations')
        .select('provider_reference')
        .where('id', '=', donationId)
        .executeTakeFirst();
      return row?.provider_reference ?? undefined;
    }, 30_000);
  return {
    pledgeRow,
    referenceOf,
    /** A monthly pledge of 40 000 IDR, answered 202 with its first donation. */
    create: async (paymentMethod: string, email = `${randomUUID()}@example.org`) => {
      const response = await fetch(`${stack().apiUrl}/v1/pledges`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${CLIENT_SECRET}`,
          'content-type': 'application/json',
          'idempotency-key': `pledge-${randomUUID()}`,
        },
        body: JSON.stringify({
          campaignId: campaignId(),
          amount: 40_000,
          currency: 'IDR',
          donor: { name: 'Sari', email, anonymous: false },
          paymentMethod,
          interval: 'monthly',
        }),
      });
      if (response.status !== 202) throw new Error(`pledge answered ${response.status}`);
      return { ...((await response.json()) as PledgeAnswer), email };
    },
    /** The card the first period kept, once the donor paid and its workflow has seen it. */
    keptMethod: async (id: string, firstDonation: string) => {
      const { cards } = card();
      if (!cards.paysByItself) cards.pay(await referenceOf(firstDonation));
      return eventually(async () => (await pledgeRow(id)).saved_method ?? undefined, 30_000);
    },
    ahead: (periods: number) => new Date(Date.now() + periods * MONTH_MS),
    /** One period (the one `at` falls in), run to its end (its retries included). */
    runPeriod: (pledgeId: string, at: Date) =>
      stack().temporal.workflow.execute<PledgePeriodWorkflow>(WorkflowType.pledgePeriod, {
        workflowId: `${pledgePeriodWorkflowId(pledgeId)}-test-${randomUUID()}`,
        taskQueue: stack().config.temporal.taskQueue,
        args: [{ pledgeId, at: at.toISOString() }],
      }),
  };
}
