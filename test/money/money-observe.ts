/**
 * What the stack holds about one case's donation, read where it lives (Postgres, the provider,
 * Temporal), and how it differs from the reference model's expectation.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import { donationWorkflowId, getStateQuery, reversalWorkflowId } from '../../workflows/contracts';
import type { ReversalResult } from '../../workflows/contracts';
import type { WebhookEvent } from '../../src/providers/payment-provider';
import type { CaseIds } from './case-ids';
import type { DriverContext } from './driver-context';
import type { Expected } from './expected';
import { sortEntries } from './expected';

export interface Observed {
  status: string;
  providerReference: string | null;
  entries: { type: string; ref: string; amount: number }[];
  campaign: { amount: number; count: number };
  /** The campaign's total recomputed from its ledger. */
  campaignLedger: { amount: number; count: number };
  /** Distinct payments the provider notified about this donation, and its charge count. */
  payments: string[];
  charges: number;
  /** Refunds the provider holds for the payment: one per refund the history made. */
  providerRefunds: number;
  reversals: Record<string, string>;
  /** Every workflow of the donation: id, status and result (for the failure report). */
  workflows: string[];
  refusedWebhooks: { status: number; body: string }[];
}

const OPEN = new Set(['PENDING', 'AWAITING_PAYMENT']);

async function donationRow(ctx: DriverContext, donationId: string) {
  return ctx.stack.db
    .selectFrom('donations')
    .select(['status', 'provider_reference'])
    .where('id', '=', donationId)
    .executeTakeFirst();
}

async function ledgerRows(ctx: DriverContext, donationId: string) {
  return ctx.stack.db
    .selectFrom('donation_ledger')
    .select(['entry_type', 'external_ref', 'amount'])
    .where('donation_id', '=', donationId)
    .orderBy('id')
    .execute();
}

/** Why the case is not quiet yet, or undefined with a fingerprint of its state when it is. */
async function unrest(ctx: DriverContext, ids: CaseIds): Promise<{ why?: string; state: string }> {
  const row = await donationRow(ctx, ids.donationId);
  const ledger = await ledgerRows(ctx, ids.donationId);
  const state = JSON.stringify([row, ledger, ctx.provider.state(ids)]);
  if (ctx.provider.inFlight(ids) > 0) return { why: 'webhooks in flight', state };
  if ((await redeliverUndelivered(ctx, ids.donationId)) > 0) {
    return { why: 'inbox rows redelivered', state };
  }
  if (!row || OPEN.has(row.status)) return { why: `donation ${row?.status ?? 'missing'}`, state };
  // A refund still pending at the provider is followed by a reversal that waits: idle.
  const idle = new Set(
    ctx.provider.pendingRefunds(ids).map((id) => reversalWorkflowId(ids.donationId, 'refund', id)),
  );
  const running: string[] = [];
  const query = `TaskQueue = '${ctx.stack.config.temporal.taskQueue}' AND ExecutionStatus = 'Running'`;
  for await (const execution of ctx.stack.temporal.workflow.list({ query })) {
    const id = execution.workflowId;
    if (id.includes(ids.donationId) && !idle.has(id)) running.push(id);
  }
  if (running.length > 0) return { why: `running: ${running.join(', ')}`, state };
  return { state };
}

/**
 * Delivers again the donation's inbox rows whose delivery failed, as the API's redelivery loop
 * does in production (the test stacks turn that loop off, as they share one database).
 */
async function redeliverUndelivered(ctx: DriverContext, donationId: string): Promise<number> {
  const rows = await ctx.stack.db
    .selectFrom('webhook_inbox')
    .select(['id', 'provider', 'event_key', 'payload', 'received_at'])
    .where('donation_id', '=', donationId)
    .where('processed_at', 'is', null)
    .execute();
  for (const row of rows) {
    const entry = {
      id: row.id,
      provider: row.provider,
      eventKey: row.event_key,
      donationId,
      event: row.payload as WebhookEvent,
      correlationId: null,
      receivedAt: row.received_at,
    };
    await ctx.delivery.deliver(entry, { warn: () => undefined }, 'redelivery');
  }
  return rows.length;
}

/**
 * Waits until nothing moves: no notification in flight, the donation decided, none of its
 * workflows running, and its rows and provider state unchanged for a second and a half.
 */
export async function waitUntilQuiet(
  ctx: DriverContext,
  ids: CaseIds,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let quietSince: number | undefined;
  let quietState: string | undefined;
  for (;;) {
    const { why, state } = await unrest(ctx, ids);
    if (why === undefined && state === quietState && quietSince !== undefined) {
      if (Date.now() - quietSince >= 1_500) return;
    } else if (why === undefined) {
      quietSince = Date.now();
      quietState = state;
    } else {
      quietSince = undefined;
      quietState = undefined;
      if (Date.now() > deadline) throw new Error(`never quiet: ${why}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

async function reversalOutcome(ctx: DriverContext, workflowId: string): Promise<string> {
  try {
    const handle = ctx.stack.temporal.workflow.getHandle(workflowId);
    const { status } = await handle.describe();
    if (status.name !== 'COMPLETED') return status.name;
    return ((await handle.result()) as ReversalResult).outcome;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return 'none';
    throw error;
  }
}

async function workflowsOf(ctx: DriverContext, donationId: string): Promise<string[]> {
  const lines: string[] = [];
  const query = `TaskQueue = '${ctx.stack.config.temporal.taskQueue}'`;
  for await (const execution of ctx.stack.temporal.workflow.list({ query })) {
    if (!execution.workflowId.includes(donationId)) continue;
    const handle = ctx.stack.temporal.workflow.getHandle(execution.workflowId, execution.runId);
    const result =
      execution.status.name === 'COMPLETED' ? JSON.stringify(await handle.result()) : '';
    lines.push(`${execution.workflowId} ${execution.runId} ${execution.status.name} ${result}`);
  }
  try {
    // The donation workflow's own account of what it saw and did (a query works once closed).
    const state = await ctx.stack.temporal.workflow
      .getHandle(donationWorkflowId(donationId))
      .query(getStateQuery);
    lines.push(...state.timeline.map((t) => `  ${t.at} ${t.event} ${t.detail ?? ''}`));
  } catch (error) {
    lines.push(`  (no timeline: ${String(error)})`);
  }
  return lines;
}

export async function observe(ctx: DriverContext, ids: CaseIds): Promise<Observed> {
  const { stack } = ctx;
  const row = await donationRow(ctx, ids.donationId);
  const byId = new Map([...ids.names].map(([name, id]) => [id, name]));
  const entries = (await ledgerRows(ctx, ids.donationId)).map((e) => ({
    type: e.entry_type,
    // The one DONATION entry of a donation is keyed '' (src/ledger/ledger-repository.ts).
    ref:
      e.entry_type === 'DONATION' && e.external_ref === ''
        ? 'payment'
        : (byId.get(e.external_ref) ?? e.external_ref),
    amount: e.amount,
  }));
  const totals = await stack.db
    .selectFrom('campaign_totals')
    .select(['confirmed_amount', 'donation_count'])
    .where('campaign_id', '=', ids.campaignId)
    .executeTakeFirst();
  const nets = await stack.db
    .selectFrom('donation_ledger')
    .select(['donation_id', (eb) => eb.fn.sum<string>('amount').as('net')])
    .where('campaign_id', '=', ids.campaignId)
    .groupBy('donation_id')
    .execute();
  const reversals: Record<string, string> = {};
  for (const [name, id] of ids.names) {
    const kind = name.startsWith('d') || name === 'reversal' ? 'dispute' : 'refund';
    reversals[name] = await reversalOutcome(ctx, reversalWorkflowId(ids.donationId, kind, id));
  }
  return {
    status: row?.status ?? 'missing',
    providerReference: row?.provider_reference ?? null,
    entries: sortEntries(entries),
    campaign: {
      amount: totals?.confirmed_amount ?? 0,
      count: totals?.donation_count ?? 0,
    },
    campaignLedger: {
      amount: nets.reduce((sum, n) => sum + Number(n.net), 0),
      count: nets.filter((n) => Number(n.net) > 0).length,
    },
    payments: ctx.provider.payments(ids),
    charges: ctx.provider.charges(ids),
    providerRefunds: ctx.provider.refunds(ids),
    reversals,
    workflows: await workflowsOf(ctx, ids.donationId),
    refusedWebhooks: ctx.provider.refused(ids),
  };
}

/** Every way the stack differs from the model, in words. */
export function compare(
  expected: Expected,
  observed: Observed,
  _ctx: DriverContext,
  ids: CaseIds,
): string[] {
  const problems: string[] = [];
  const json = (value: unknown) => JSON.stringify(value);
  if (observed.status !== expected.status) {
    problems.push(`status ${observed.status}, the model says ${expected.status}`);
  }
  const entries = sortEntries(observed.entries);
  const want = sortEntries(expected.entries);
  if (json(entries) !== json(want)) {
    problems.push(`ledger ${json(observed.entries)}, the model says ${json(want)}`);
  }
  if (json(observed.campaign) !== json(expected.campaign)) {
    problems.push(
      `campaign total ${json(observed.campaign)}, the model says ${json(expected.campaign)}`,
    );
  }
  if (json(observed.campaign) !== json(observed.campaignLedger)) {
    problems.push(
      `campaign_totals ${json(observed.campaign)} ≠ its ledger ${json(observed.campaignLedger)}`,
    );
  }
  if (observed.charges !== 1) problems.push(`${observed.charges} charges at the provider`);
  if (
    observed.payments.length > 1 ||
    (observed.payments[0] ?? ids.providerReference) !== ids.providerReference
  ) {
    problems.push(
      `payments notified: ${json(observed.payments)}, created ${ids.providerReference ?? '?'}`,
    );
  }
  if (observed.providerReference !== ids.providerReference) {
    problems.push(
      `provider_reference ${observed.providerReference ?? 'null'} ≠ ${ids.providerReference ?? '?'}`,
    );
  }
  const refunds = [...ids.names.keys()].filter(
    (name) => !name.startsWith('d') && name !== 'reversal',
  ).length;
  if (observed.providerRefunds !== refunds) {
    problems.push(`${observed.providerRefunds} refunds at the provider for ${refunds} asked`);
  }
  for (const [name, outcome] of Object.entries(expected.reversals)) {
    if (observed.reversals[name] !== outcome) {
      problems.push(
        `reversal ${name} ended ${observed.reversals[name] ?? 'unseen'}, the model says ${outcome}`,
      );
    }
  }
  for (const refused of observed.refusedWebhooks) {
    problems.push(`a notification was answered ${refused.status}: ${refused.body}`);
  }
  return problems;
}
