import { createHmac, randomUUID } from 'node:crypto';
import pg from 'pg';
import { DEV_SIMULATOR_SECRET } from '../../src/config/config';
import { donationWorkflowId } from '../../workflows/contracts';
import { signStandardWebhook } from '../../src/providers/standard-webhooks';
import { eventually } from './stack';
import type { Stack } from './stack';
import { testState } from './test-env';

/**
 * What the money tests read: a donation's rows in Postgres, its payment at the simulator, the
 * workflows that follow its money, and notifications made the way each provider signs them.
 */

/** The simulator's id of the donation's payment, once its workflow has created it. */
export function paymentOf(stack: Stack, donationId: string): Promise<string> {
  return eventually(async () => stack.simulator.paymentByReference(donationId)?.id);
}

/** The donation's ledger entries as stored, oldest first. */
export function ledgerOf(stack: Stack, donationId: string) {
  return stack.db
    .selectFrom('donation_ledger')
    .select(['entry_type', 'external_ref', 'amount'])
    .where('donation_id', '=', donationId)
    .orderBy('id')
    .execute();
}

/** A ledger row as {@link ledgerOf} reads it; amounts signed as stored. */
export const ledgerEntry = (entry_type: string, external_ref: string, amount: number) => ({
  entry_type,
  external_ref,
  amount,
});

/** Waits until the donation's ledger holds `count` entries, and returns them. */
export function ledgerWith(stack: Stack, donationId: string, count: number) {
  return eventually(async () => {
    const entries = await ledgerOf(stack, donationId);
    return entries.length >= count ? entries : undefined;
  });
}

export async function rowOf(stack: Stack, donationId: string) {
  return stack.db
    .selectFrom('donations')
    .selectAll()
    .where('id', '=', donationId)
    .executeTakeFirstOrThrow();
}

/** Waits until a workflow with this ID has run and closed; returns its result. */
export async function closedResult<T>(
  stack: Stack,
  workflowId: string,
  timeoutMs = 30_000,
): Promise<T> {
  const handle = stack.temporal.workflow.getHandle(workflowId);
  await eventually(async () => {
    try {
      return (await handle.describe()).status.name === 'RUNNING' ? undefined : true;
    } catch {
      return undefined;
    }
  }, timeoutMs);
  return (await handle.result()) as T;
}

/** Waits until a workflow with this ID exists and is running. */
export async function runningWorkflow(stack: Stack, workflowId: string): Promise<void> {
  const handle = stack.temporal.workflow.getHandle(workflowId);
  await eventually(async () => {
    try {
      return (await handle.describe()).status.name === 'RUNNING' ? true : undefined;
    } catch {
      return undefined;
    }
  });
}

/** How many times an activity of this name completed in the workflow's latest run. */
export async function completedActivities(
  stack: Stack,
  workflowId: string,
  activity: string,
): Promise<number> {
  const history = await stack.temporal.workflow.getHandle(workflowId).fetchHistory();
  const events = history.events ?? [];
  const scheduled = new Set(
    events
      .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === activity)
      .map((e) => String(e.eventId)),
  );
  return events.filter((e) =>
    scheduled.has(String(e.activityTaskCompletedEventAttributes?.scheduledEventId)),
  ).length;
}

/** How many signals the donation's workflow has received: none for an event it must not see. */
export async function signalsTo(stack: Stack, donationId: string): Promise<number> {
  const history = await stack.temporal.workflow
    .getHandle(donationWorkflowId(donationId))
    .fetchHistory();
  return (history.events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes).length;
}

/** The inbox rows recorded for one provider event. */
export function inboxRow(stack: Stack, provider: string, eventKey: string) {
  return stack.db
    .selectFrom('webhook_inbox')
    .select(['donation_id', 'processed_at', 'last_error'])
    .where('provider', '=', provider)
    .where('event_key', '=', eventKey)
    .executeTakeFirst();
}

/** Waits until the donation's inbox holds a processed row matching `status` (and `id`). */
export function processedEvent(
  stack: Stack,
  donationId: string,
  match: { kind: string; status: string; refundId?: string; disputeId?: string },
) {
  return eventually(async () => {
    const rows = await stack.db
      .selectFrom('webhook_inbox')
      .select(['payload', 'processed_at', 'last_error'])
      .where('donation_id', '=', donationId)
      .where('processed_at', 'is not', null)
      .execute();
    return rows.find((row) => {
      const event = row.payload as Record<string, unknown>;
      return Object.entries(match).every(([key, value]) => event[key] === value);
    });
  });
}

/** POSTs a notification to galang's webhook route; returns the HTTP status. */
export async function postWebhook(
  stack: Stack,
  provider: string,
  body: string,
  headers: Record<string, string>,
): Promise<number> {
  const response = await fetch(`${stack.apiUrl}/v1/webhooks/${provider}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  await response.arrayBuffer();
  return response.status;
}

/**
 * A simulator notification signed with the simulator's secret, as a captured body replayed or
 * edited by someone who can sign it: for providers whose signature leaves the status out, that
 * is anyone who saw one notification. Returns its `webhook-id` (the inbox event key).
 */
export async function sendSimulatorNotification(
  stack: Stack,
  notification: { type: string; data: Record<string, unknown> },
): Promise<{ status: number; eventKey: string }> {
  const body = JSON.stringify(notification);
  const eventKey = `msg_${randomUUID()}`;
  const timestamp = Math.floor(Date.now() / 1000);
  const status = await postWebhook(stack, 'simulator', body, {
    'webhook-id': eventKey,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signStandardWebhook(DEV_SIMULATOR_SECRET, eventKey, timestamp, body),
  });
  return { status, eventKey };
}

/** A `Stripe-Signature` header as Stripe makes it: HMAC-SHA256 of `<t>.<body>`, hex. */
export function stripeSignature(secret: string, body: string): string {
  const timestamp = Math.floor(Date.now() / 1000);
  const mac = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
  return `t=${timestamp},v1=${mac}`;
}

/**
 * Runs `during` while the test holds the donation's row lock, as a slow or retrying step of
 * galang would: every confirmation, ending or posting of the donation waits for it. `blocked`
 * resolves once one of them is waiting.
 */
export async function holdingRow<T>(
  stack: Stack,
  donationId: string,
  during: (blocked: () => Promise<unknown>) => Promise<T>,
): Promise<T> {
  const lock = new pg.Client({ connectionString: testState().databaseUrl });
  await lock.connect();
  try {
    await lock.query('BEGIN');
    await lock.query('SELECT id FROM donations WHERE id = $1 FOR UPDATE', [donationId]);
    const { rows } = await lock.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const blocked = () =>
      eventually(async () => {
        const waiting = await lock.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))',
          [rows[0]?.pid],
        );
        return (waiting.rows[0]?.n ?? 0) > 0 ? true : undefined;
      });
    return await during(blocked);
  } finally {
    await lock.query('COMMIT');
    await lock.end();
  }
}
