import { loadConfig } from '../src/config/config';
import { connectTemporalClient } from '../src/temporal/temporal-client';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import type { KyselyPlugin } from 'kysely';
import { createDatabase } from '../src/db/database';
import type { Db } from '../src/db/database';
import { donationWorkflowId } from '../workflows/contracts';
import type { Accepted } from './spike-load';
import { SPIKE_CLIENT } from './spike-stack';
import type { SpikeStack } from './spike-stack';

export interface Confirmation {
  confirmed: number;
  /** When the last of them was confirmed (ms since the epoch), as Postgres recorded it. */
  lastConfirmedAt: number;
}

/** Waits (at most `timeoutMs`) until every accepted donation is CONFIRMED. */
export async function waitForConfirmations(
  db: Db,
  campaignId: string,
  expected: number,
  timeoutMs: number,
): Promise<Confirmation> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = await db
      .selectFrom('donations')
      .select((eb) => [eb.fn.countAll<string>().as('n'), eb.fn.max('confirmed_at').as('last')])
      .where('campaign_id', '=', campaignId)
      .where('status', '=', 'CONFIRMED')
      .executeTakeFirstOrThrow();
    const confirmed = Number(row.n);
    if (confirmed >= expected || Date.now() > deadline) {
      const last = row.last;
      return { confirmed, lastConfirmedAt: last ? last.getTime() : Date.now() };
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * Waits (at most `timeoutMs`) until the campaign's confirmations have their receipts mailed (or
 * their mail ended otherwise): the round's own work, finished before the next round begins, so
 * a yardstick never runs beside receipts the donations before it left. Returns how many are.
 */
export async function waitForReceiptsMailed(
  db: Db,
  campaignId: string,
  expected: number,
  timeoutMs: number,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = await db
      .selectFrom('receipts')
      .innerJoin('donations', 'donations.id', 'receipts.donation_id')
      .innerJoin('mail_deliveries', 'mail_deliveries.receipt_number', 'receipts.number')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('donations.campaign_id', '=', campaignId)
      .where('receipts.series', '=', 'receipt')
      .where('mail_deliveries.status', '!=', 'sending')
      .executeTakeFirstOrThrow();
    const mailed = Number(row.n);
    if (mailed >= expected || Date.now() > deadline) return mailed;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * Every accepted donation confirmed exactly once, from the data: one row each and no other row
 * in the campaign, all CONFIRMED, one DONATION ledger entry each with its amount and no other
 * entry, and the campaign total equal to the ledger. Returns the problems found (none: []).
 */
export async function verifyExactlyOnce(
  db: Db,
  campaignId: string,
  accepted: readonly Accepted[],
): Promise<string[]> {
  const problems: string[] = [];
  const expected = new Map(accepted.map((a) => [a.id, a.amount]));
  if (expected.size !== accepted.length) problems.push('two keys answered with one donation id');
  const rows = await db
    .selectFrom('donations')
    .select(['id', 'status', 'amount'])
    .where('campaign_id', '=', campaignId)
    .execute();
  if (rows.length !== expected.size) {
    problems.push(`${rows.length} donation rows for ${expected.size} accepted donations`);
  }
  for (const row of rows) {
    if (!expected.has(row.id)) problems.push(`donation ${row.id} was never accepted`);
    else if (row.status !== 'CONFIRMED') problems.push(`donation ${row.id} is ${row.status}`);
  }
  const ledger = await db
    .selectFrom('donation_ledger')
    .select(['donation_id', 'entry_type', 'amount'])
    .where('campaign_id', '=', campaignId)
    .execute();
  const entries = new Map<string, number>();
  for (const entry of ledger) {
    if (entry.entry_type !== 'DONATION') problems.push(`a ${entry.entry_type} entry`);
    entries.set(entry.donation_id, (entries.get(entry.donation_id) ?? 0) + 1);
    if (expected.get(entry.donation_id) !== entry.amount) {
      problems.push(`ledger amount of ${entry.donation_id} is ${entry.amount}`);
    }
  }
  for (const id of expected.keys()) {
    if (entries.get(id) !== 1) problems.push(`${entries.get(id) ?? 0} ledger entries for ${id}`);
  }
  const totals = await db
    .selectFrom('campaign_totals')
    .select(['confirmed_amount', 'donation_count'])
    .where('campaign_id', '=', campaignId)
    .executeTakeFirst();
  const sum = [...expected.values()].reduce((a, b) => a + b, 0);
  if (
    Number(totals?.confirmed_amount) !== sum ||
    Number(totals?.donation_count) !== expected.size
  ) {
    problems.push(
      `totals ${totals?.confirmed_amount}/${totals?.donation_count}, ledger ${sum}/${expected.size}`,
    );
  }
  return problems.slice(0, 10);
}

export interface DonationCosts {
  donations: number;
  historyEvents: number;
  stateTransitions: number;
  workflowTasks: number;
  activityTasks: number;
  localActivities: number;
  postgresTransactions: number;
  /** Rows written per table, per donation. */
  rows: Record<string, number>;
  redisCommands: number;
  /** Workflows of each type the probe's stack started, per donation (mail batches included). */
  workflows: Record<string, number>;
}

/**
 * What one donation costs, measured on `n` donations made one at a time through a stack of its
 * own: Temporal history events, state transitions, workflow and activity tasks (from one
 * donation's history and description), Postgres transactions and rows written (pg_stat deltas:
 * a backend reports its counts when it ends, so they are read with no stack running, before
 * this one starts and after it stopped), and Redis commands that name the stack's keys
 * (MONITOR, on for this probe only).
 */
export async function measureDonationCosts(options: {
  db: Db;
  databaseUrl: string;
  redisUrl: string;
  startStack: () => Promise<SpikeStack>;
  newCampaign: () => Promise<string>;
  n: number;
}): Promise<DonationCosts> {
  const { db, n } = options;
  const database = (await sql<{ db: string }>`SELECT current_database() AS db`.execute(db)).rows[0]
    ?.db;
  const pgStats = async () => {
    const xact = await sql<{ n: string }>`
      SELECT (xact_commit - sessions)::text AS n FROM pg_stat_database WHERE datname = ${database}
    `.execute(db);
    const tables = await sql<{ relname: string; writes: string }>`
      SELECT relname, (n_tup_ins + n_tup_upd + n_tup_del)::text AS writes FROM pg_stat_user_tables
    `.execute(db);
    return {
      xact: Number(xact.rows[0]?.n ?? 0),
      tables: new Map(tables.rows.map((r) => [r.relname, Number(r.writes)])),
    };
  };

  const before = await pgStats();
  const stack = await options.startStack();
  const campaignId = await options.newCampaign();
  const redis = new Redis(options.redisUrl);
  // ioredis takes a command monitored in the same read as MONITOR's reply for a reply of its own
  // and fails (taskforcesh/bullmq#2505): this client's own ready check must be over first.
  await redis.ping();
  const monitor = await redis.monitor();
  let redisCommands = 0;
  monitor.on('monitor', (_time: string, args: string[]) => {
    if (args.some((arg) => arg.startsWith(stack.redisPrefix))) redisCommands++;
  });
  // The probe's own reads go through a session of their own, counted and closed (so reported)
  // before the totals are read, and taken off them.
  let ownStatements = 0;
  const counting: KyselyPlugin = {
    transformQuery: (args) => {
      ownStatements++;
      return args.node;
    },
    transformResult: (args) => Promise.resolve(args.result),
  };
  const probeDb = createDatabase({ connectionString: options.databaseUrl, max: 1 }).withPlugin(
    counting,
  );
  const ids: string[] = [];
  const post = (i: number) =>
    fetch(`${stack.apiUrl}/v1/donations`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${SPIKE_CLIENT.secret}`,
        'idempotency-key': `probe-${campaignId}-${i}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        campaignId: campaignId,
        amount: 25_000,
        currency: 'IDR',
        donor: { name: 'Probe', email: 'probe@example.com', anonymous: false },
        paymentMethod: 'qris',
      }),
    });
  for (let i = 0; i < n; i++) {
    // As a client would: a node that is still starting answers 503, retried with the same key.
    let response = await post(i);
    for (let retry = 0; response.status === 503 && retry < 60; retry++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      response = await post(i);
    }
    const answer = (await response.json()) as { id?: string };
    if (response.status !== 202 || !answer.id) {
      throw new Error(`The probe's donation got ${response.status}: ${JSON.stringify(answer)}`);
    }
    ids.push(answer.id);
    await waitForConfirmations(probeDb, campaignId, i + 1, 30_000);
  }
  await probeDb.destroy();
  // The workflow closes after the confirmation: let the last one finish before counting.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  monitor.disconnect();
  redis.disconnect();

  // Through galang's own client builder: the histories' payloads are encrypted.
  const client = await connectTemporalClient(
    loadConfig({ ...process.env, TEMPORAL_ADDRESS: stack.temporalAddress }).temporal,
  );
  const handle = client.workflow.getHandle(donationWorkflowId(ids[0] ?? ''));
  const { raw } = await handle.describe();
  const events = (await handle.fetchHistory()).events ?? [];
  const workflows: Record<string, number> = {};
  for await (const execution of client.workflow.list()) {
    workflows[execution.type] = (workflows[execution.type] ?? 0) + 1 / n;
  }
  await client.connection.close();

  await stack.stop();
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const after = await pgStats();
  const rows: Record<string, number> = {};
  for (const [table, writes] of after.tables) {
    const delta = writes - (before.tables.get(table) ?? 0);
    if (delta > 0) rows[table] = delta / n;
  }
  return {
    donations: n,
    historyEvents: events.length,
    stateTransitions: Number(raw.workflowExecutionInfo?.stateTransitionCount ?? 0),
    workflowTasks: events.filter((e) => e.workflowTaskCompletedEventAttributes).length,
    activityTasks: events.filter((e) => e.activityTaskScheduledEventAttributes).length,
    localActivities: events.filter(
      (e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity',
    ).length,
    postgresTransactions: (after.xact - before.xact - ownStatements) / n,
    rows,
    redisCommands: redisCommands / n,
    workflows,
  };
}
