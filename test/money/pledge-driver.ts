import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { periodOf } from '../../src/pledges/pledge-calendar';
import {
  WorkflowType,
  pledgeFirstPeriodWorkflowId,
  pledgePeriodWorkflowId,
} from '../../workflows/contracts';
import type { PledgePeriodWorkflow } from '../../workflows/contracts';
import type { CardStack } from '../support/card-stacks';
import { CLIENT_SECRET, createCampaign } from '../support/stack';
import { PledgeModel } from './pledge-history';
import type { ExpectedPeriod, PeriodStep, PledgeHistory } from './pledge-history';
import { resetWorkflow } from './workflow-control';
import type { CaseResult } from './case-tally';

const DAY_MS = 86_400_000;
/** How far apart the driver plays a pledge's periods: each lands in the next month or week. */
const PERIOD_STEP_MS = { monthly: 32 * DAY_MS, weekly: 7 * DAY_MS } as const;
/** A period ends within its attempts' deadlines and retry delays: far less than this. */
const PERIOD_TIMEOUT_MS = 90_000;

async function withTimeout<T>(work: Promise<T>, ms: number, why: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      reject(new Error(why()));
    }, ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
const REAL = { kind: 'real' } as const;

/**
 * Plays one generated pledge history on the real stack and checks it against the model: each
 * period's attempts (who they asked), exactly one charge at the provider and one credit for a
 * period that should be paid and none for one that should not (after a cancel, while paused,
 * or every attempt failed), the pledge's status, and the campaign's total equal to its ledger.
 */
export async function runPledgeCase(
  card: CardStack,
  history: PledgeHistory,
  method: string,
): Promise<CaseResult> {
  const { stack } = card.mail;
  const period = (at: Date) => periodOf(history.interval, at, 'Asia/Jakarta', REAL);
  const header = `case ${history.index} (seed ${history.seed}, ${history.interval})`;
  const campaignId = await createCampaign(stack.db);
  const model = new PledgeModel(history.amount, method === 'card');
  const api = (path: string, init: { method: string; body?: unknown; key?: string }) =>
    fetch(`${stack.apiUrl}${path}`, {
      method: init.method,
      headers: {
        authorization: `Bearer ${CLIENT_SECRET}`,
        ...(init.key && { 'idempotency-key': init.key }),
        ...(init.body !== undefined && { 'content-type': 'application/json' }),
      },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
  const created = await api('/v1/pledges', {
    method: 'POST',
    key: `pledge-model-${history.seed}-${randomUUID()}`,
    body: {
      campaignId,
      amount: history.amount,
      currency: 'IDR',
      donor: { name: 'Model', email: `model-${history.index}@example.org`, anonymous: false },
      paymentMethod: method,
      interval: history.interval,
    },
  });
  if (created.status !== 202) throw new Error(`pledge refused: ${await created.text()}`);
  const pledgeId = ((await created.json()) as { pledge: { id: string } }).pledge.id;
  const played: { period: string; expected: ExpectedPeriod }[] = [];
  const log: string[] = [];
  const cardProblems: string[] = [];

  const play = async (
    at: Date,
    step: PeriodStep,
    runs: WorkflowHandleWithFirstExecutionRunId[],
  ) => {
    // The card's answers to this period's charges, queued at the provider before any of them.
    const kept = await keptCard(card, pledgeId);
    if (kept !== null) card.cards.queueCard(kept, step.answers);
    if ((kept !== null) !== model.card) {
      cardProblems.push(
        `before ${period(at)}: kept card ${kept ?? 'none'}, the model's ${model.card}`,
      );
    }
    const expected = model.period(step);
    played.push({ period: period(at), expected });
    log.push(`period ${period(at)}: ${JSON.stringify(step)} → ${JSON.stringify(expected)}`);
    let done = false;
    const payer = payAsTheDonor(card, pledgeId, period(at), expected, step, () => done);
    // Awaited before the period is over: a kill still pending when the case ended fired after
    // the stack had stopped, and shutting down its stopped worker failed the batch.
    const kill = step.kill
      ? new Promise((resolve) => setTimeout(resolve, 50 + (history.seed % 400))).then(() =>
          card.restartWorker(),
        )
      : undefined;
    try {
      await withTimeout(
        Promise.all(runs.map((run) => run.result())),
        PERIOD_TIMEOUT_MS,
        () => `period ${period(at)} did not end in ${PERIOD_TIMEOUT_MS} ms:\n${log.join('\n')}`,
      );
    } finally {
      done = true;
      await kill;
    }
    await payer;
    if (step.reset) {
      const [run] = runs;
      if (run) log.push(await resetWorkflow(stack, run.workflowId, 'first-task'));
      if (run) await stack.temporal.workflow.getHandle(run.workflowId).result();
    }
  };
  const startPeriod = (at: Date) =>
    stack.temporal.workflow.start<PledgePeriodWorkflow>(WorkflowType.pledgePeriod, {
      workflowId: `${pledgePeriodWorkflowId(pledgeId)}-model-${randomUUID()}`,
      taskQueue: stack.config.temporal.taskQueue,
      args: [{ pledgeId, at: at.toISOString() }],
    });

  const first = stack.temporal.workflow.getHandle(pledgeFirstPeriodWorkflowId(pledgeId));
  await play(new Date(), history.first, [first as WorkflowHandleWithFirstExecutionRunId]);
  let periods = 0;
  for (const step of history.steps) {
    if (step.kind !== 'period') {
      const accepted = model.change(step);
      const answer =
        step.kind === 'amount'
          ? await api(`/v1/pledges/${pledgeId}`, { method: 'PATCH', body: { amount: step.amount } })
          : await api(`/v1/pledges/${pledgeId}/${step.kind}`, { method: 'POST' });
      log.push(`${step.kind}: ${answer.status}`);
      if ((answer.status === 200) !== accepted) {
        const problem = `${step.kind} answered ${answer.status}, the model ${String(accepted)}`;
        return { problems: [problem], report: [header, ...log, problem].join('\n') };
      }
      continue;
    }
    periods++;
    const at = new Date(Date.now() + periods * PERIOD_STEP_MS[history.interval]);
    const runs = [await startPeriod(at), ...(step.double ? [await startPeriod(at)] : [])];
    await play(at, step, runs);
  }
  const problems = [...cardProblems, ...(await check(card, pledgeId, campaignId, model, played))];
  return {
    problems,
    report: [header, ...log, ...problems].join('\n'),
  };
}

/** The card the pledge keeps now, as galang stored it. */
async function keptCard(card: CardStack, pledgeId: string): Promise<string | null> {
  const row = await card.mail.stack.db
    .selectFrom('pledges')
    .select('saved_method')
    .where('id', '=', pledgeId)
    .executeTakeFirstOrThrow();
  return row.saved_method;
}

/** Pays each attempt the model says asks the donor and the history says they pay. */
async function payAsTheDonor(
  card: CardStack,
  pledgeId: string,
  period: string,
  expected: ExpectedPeriod,
  step: PeriodStep,
  done: () => boolean,
): Promise<void> {
  const paid = new Set<number>();
  while (!done()) {
    const rows = await attemptsOf(card, pledgeId, period);
    for (const row of rows) {
      const pays = expected.asksDonor[row.attempt] === true && step.donorPays[row.attempt];
      const reference = row.provider_reference;
      if (!pays || paid.has(row.attempt) || row.status !== 'AWAITING_PAYMENT' || !reference) {
        continue;
      }
      if (!card.cards.pending(reference)) continue;
      card.cards.pay(reference);
      paid.add(row.attempt);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function attemptsOf(card: CardStack, pledgeId: string, period: string) {
  return card.mail.stack.db
    .selectFrom('pledge_periods as p')
    .innerJoin('donations as d', 'd.id', 'p.donation_id')
    .select(['p.attempt', 'p.donation_id', 'd.status', 'd.provider_reference'])
    .where('p.pledge_id', '=', pledgeId)
    .where('p.period', '=', period)
    .orderBy('p.attempt')
    .execute();
}

async function check(
  card: CardStack,
  pledgeId: string,
  campaignId: string,
  model: PledgeModel,
  played: readonly { period: string; expected: ExpectedPeriod }[],
): Promise<string[]> {
  const { db } = card.mail.stack;
  const problems: string[] = [];
  let owed = 0;
  for (const { period, expected } of played) {
    const rows = await attemptsOf(card, pledgeId, period);
    if (rows.length !== expected.asksDonor.length) {
      problems.push(`${period}: ${rows.length} attempts, the model ${expected.asksDonor.length}`);
    }
    const ids = rows.map((row) => row.donation_id);
    const credits =
      ids.length === 0
        ? []
        : await db
            .selectFrom('donation_ledger')
            .select(['donation_id', 'amount'])
            .where('donation_id', 'in', ids)
            .where('entry_type', '=', 'DONATION')
            .execute();
    const want = expected.paidAttempt === undefined ? [] : [expected.amount];
    const got = credits.map((credit) => credit.amount);
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      problems.push(`${period}: credits ${JSON.stringify(got)}, the model ${JSON.stringify(want)}`);
    }
    const paidRow = rows.find((row) => row.attempt === expected.paidAttempt);
    if (
      expected.paidAttempt !== undefined &&
      !credits.some((c) => c.donation_id === paidRow?.donation_id)
    ) {
      problems.push(`${period}: attempt ${expected.paidAttempt} is not the one credited`);
    }
    const charged = card.cards.payments(ids).filter((payment) => payment.status === 'paid');
    if (charged.length !== want.length) {
      problems.push(`${period}: ${charged.length} paid at the provider, the model ${want.length}`);
    }
    owed += want.reduce((sum, amount) => sum + amount, 0);
  }
  const pledge = await db
    .selectFrom('pledges')
    .select('status')
    .where('id', '=', pledgeId)
    .executeTakeFirstOrThrow();
  if (pledge.status !== model.status) {
    problems.push(`pledge ${pledge.status}, the model ${model.status}`);
  }
  const totals = await sql<{ ledger: string; total: string }>`
    SELECT (SELECT coalesce(sum(l.amount), 0) FROM donation_ledger l
              JOIN donations d ON d.id = l.donation_id WHERE d.campaign_id = ${campaignId}) AS ledger,
           (SELECT coalesce(sum(confirmed_amount), 0) FROM campaign_totals
             WHERE campaign_id = ${campaignId}) AS total
  `.execute(db);
  const { ledger, total } = totals.rows[0] ?? { ledger: '0', total: '0' };
  if (Number(ledger) !== owed || Number(total) !== owed) {
    problems.push(`campaign: ledger ${ledger}, total ${total}, the model ${owed}`);
  }
  return problems;
}
