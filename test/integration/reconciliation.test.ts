import { donationWorkflowId } from '../../workflows/contracts';
import type { WebhookEvent } from '../../src/providers/payment-provider';
import {
  ensureReconciliationSchedule,
  reconciliationScheduleId,
  runReconciliationNow,
} from '../../src/reconciliation/reconciliation-schedule';
import { WorkflowType } from '../../workflows/contracts';
import type { ReconciliationReport } from '../../workflows/contracts';
import { ProgressCache } from '../../src/campaigns/progress-cache';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { DonorDetailsRepository } from '../../src/donations/donor-details-repository';
import { WebhookInboxRepository } from '../../src/webhooks/webhook-inbox-repository';
import { ensureIntervalSchedule } from '../../src/temporal/interval-schedule';
import { effectsOf, totalsOf, waitForStatus, workflowResult } from '../support/donations';
import {
  backdateDonation,
  donate,
  metricValue,
  refund,
  snapshotOf,
  corruptTotal,
} from '../support/reconciliation';
import { ledgerEntry, ledgerWith } from '../support/money';
import { ops } from '../support/ops';
import { createOwnDatabase } from '../support/own-database';
import type { OwnDatabase } from '../support/own-database';
import { createCampaign, eventually, startStack } from '../support/stack';
import type { Stack } from '../support/stack';

/**
 * Reconciliation on the real stack, run through the schedule the worker creates. A run repairs
 * and counts every campaign, so this file has a database of its own: on the shared one, another
 * file's reconciliation could repair the drift a test made before the test's own run saw it.
 */
describe('reconciliation', () => {
  let stack: Stack;
  let taskQueue: string;
  let database: OwnDatabase;

  beforeAll(async () => {
    database = await createOwnDatabase('reconciliation');
    stack = await startStack({ autoPayMs: 100, databaseUrl: database.url });
    taskQueue = stack.config.temporal.taskQueue;
    await ensureReconciliationSchedule(stack.temporal, { taskQueue, intervalSeconds: 3600 });
  });
  afterAll(async () => {
    await stack.temporal.schedule.getHandle(reconciliationScheduleId(taskQueue)).delete();
    await stack.stop();
    await database.drop();
  });

  /** A paid event recorded in the inbox ten minutes ago and never delivered (the API crashed). */
  async function lostWebhook(donationId: string, amount: number): Promise<string> {
    const event: WebhookEvent = {
      kind: 'payment',
      eventKey: `lost-${donationId}`,
      status: 'PAID',
      amount,
      currency: 'IDR',
      occurredAt: new Date().toISOString(),
      donationRef: donationId,
      providerReference: stack.simulator.paymentByReference(donationId)?.id ?? '',
    };
    const row = await new WebhookInboxRepository(stack.db).insert('simulator', event, '{}');
    if (!row) throw new Error('inbox row not recorded');
    await stack.db
      .updateTable('webhook_inbox')
      .set({ received_at: new Date(Date.now() - 600_000) })
      .where('id', '=', row.id)
      .execute();
    return row.id;
  }

  async function backdateInbox(rowId: string, days: number): Promise<void> {
    await stack.db
      .updateTable('webhook_inbox')
      .set({ received_at: new Date(Date.now() - days * 86_400_000) })
      .where('id', '=', rowId)
      .execute();
  }

  it('creates its schedule once: a second call at worker start changes nothing', async () => {
    const handle = stack.temporal.schedule.getHandle(reconciliationScheduleId(taskQueue));
    const before = await handle.describe();
    expect(
      await ensureReconciliationSchedule(stack.temporal, { taskQueue, intervalSeconds: 3600 }),
    ).toBe('unchanged');
    expect(
      await ensureReconciliationSchedule(stack.temporal, { taskQueue, intervalSeconds: 0 }),
    ).toBe('disabled');
    const after = await handle.describe();
    expect(after.info.createdAt).toEqual(before.info.createdAt);
    expect(after.info.lastUpdatedAt).toEqual(before.info.lastUpdatedAt);
    expect(after.spec.intervals).toMatchObject([{ every: 3_600_000 }]);
    expect(after.action).toMatchObject({ workflowType: WorkflowType.reconciliation, taskQueue });

    // A worker started with another interval moves the existing schedule to it.
    const ensure = (intervalSeconds: number) =>
      ensureReconciliationSchedule(stack.temporal, { taskQueue, intervalSeconds });
    expect(await ensure(7200)).toBe('updated');
    expect((await handle.describe()).spec.intervals).toMatchObject([{ every: 7_200_000 }]);
    expect(await ensure(3600)).toBe('updated');

    // One whose runs should go to another task queue is moved there (a schedule made before
    // the receipts had a queue of their own still numbers them).
    const moved = await ensureIntervalSchedule(stack.temporal, {
      scheduleId: reconciliationScheduleId(taskQueue),
      workflowType: WorkflowType.reconciliation,
      workflowId: `moved-${taskQueue}`,
      taskQueue: `${taskQueue}-elsewhere`,
      intervalSeconds: 3600,
    });
    expect(moved).toBe('updated');
    expect((await handle.describe()).action).toMatchObject({ taskQueue: `${taskQueue}-elsewhere` });
    expect(await ensure(3600)).toBe('updated');
    expect((await handle.describe()).action).toMatchObject({ taskQueue });
  });

  it('repairs a corrupted total from the ledger, records it, and changes nothing else', async () => {
    const [drifted, other, empty] = [
      await createCampaign(stack.db),
      await createCampaign(stack.db),
      await createCampaign(stack.db),
    ];
    const kept = await donate(stack, drifted, 50_000);
    const returned = await donate(stack, drifted, 30_000);
    await donate(stack, other, 20_000);
    await waitForStatus(stack, kept, 'CONFIRMED');
    await waitForStatus(stack, returned, 'CONFIRMED');
    await refund(stack, kept, 10_000, 'PARTIALLY_REFUNDED');
    await refund(stack, returned, 30_000, 'REFUNDED');
    await eventually(async () => {
      const o = await totalsOf(stack, other);
      return o.donation_count === 1 ? o : undefined;
    });
    const correct = await totalsOf(stack, drifted);
    expect(correct).toEqual({ confirmed_amount: 40_000, donation_count: 1 });
    const progress = () =>
      fetch(`${stack.apiUrl}/v1/campaigns/${drifted}/progress`).then(
        (r) => r.json() as Promise<{ confirmedAmount: number }>,
      );
    const showing = (amount: number) => async () =>
      (await progress()).confirmedAmount === amount ? true : undefined;
    // The workflows' cache refreshes have landed before the total is corrupted.
    await eventually(showing(40_000));

    await corruptTotal(stack, drifted, { amount: 999, count: 7 });
    // The cached value expires; the next reads rebuild it from the corrupted row.
    await new ProgressCache(stack.redis, stack.config.progress).invalidate(drifted);
    await eventually(showing(999));
    const before = await snapshotOf(stack, [drifted, other, empty]);
    const corrupted = before.totals.find((t) => t.campaign_id === drifted);
    const repairsBefore = (await metricValue(stack, 'galang_reconciliation_repairs_total')) ?? 0;
    const startedAt = Date.now() / 1000;

    const report = await runReconciliationNow(stack.temporal, taskQueue);

    expect(report.repaired).toEqual([
      {
        campaignId: drifted,
        before: { amount: 999, count: 7, version: corrupted?.version },
        after: { amount: 40_000, count: 1, version: Number(corrupted?.version) + 1 },
      },
    ]);
    expect(report.skipped).toEqual([]);
    expect(report.campaignsChecked).toBeGreaterThanOrEqual(3);
    expect(await totalsOf(stack, drifted)).toEqual(correct);
    // Reconciliation dropped the cached value: pages show the repaired total again.
    await eventually(showing(40_000));

    const after = await snapshotOf(stack, [drifted, other, empty]);
    expect(after.ledger).toEqual(before.ledger);
    expect(after.donations).toEqual(before.donations);
    expect(after.totals.filter((t) => t.campaign_id !== drifted)).toEqual(
      before.totals.filter((t) => t.campaign_id !== drifted),
    );
    const recorded = await stack.db
      .selectFrom('reconciliation_repairs')
      .selectAll()
      .where('campaign_id', 'in', [drifted, other, empty])
      .execute();
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({
      run_id: report.runId,
      campaign_id: drifted,
      before_amount: 999,
      after_amount: 40_000,
    });

    expect(await metricValue(stack, 'galang_reconciliation_repairs_total')).toBe(repairsBefore + 1);
    expect(await metricValue(stack, 'galang_reconciliation_drift_campaigns')).toBe(1);
    expect(
      await metricValue(stack, 'galang_reconciliation_last_run_timestamp_seconds'),
    ).toBeGreaterThanOrEqual(Math.floor(startedAt));

    // Nothing left to repair: a second run finds no drift and writes nothing.
    const again = await runReconciliationNow(stack.temporal, taskQueue);
    expect(again.repaired).toEqual([]);
    expect(await snapshotOf(stack, [drifted, other, empty])).toEqual(after);
  });

  it('hands a stuck donation whose workflow was terminated back, and it settles once', async () => {
    const campaignId = await createCampaign(stack.db);
    const id = await donate(stack, campaignId, 25_000, { autoPayMs: -1 });
    await waitForStatus(stack, id, 'AWAITING_PAYMENT');
    const workflow = stack.temporal.workflow.getHandle(donationWorkflowId(id));
    await workflow.terminate('test: a stuck donation');
    // The donor pays after the workflow is gone: the webhook finds no workflow to signal.
    stack.simulator.transition(stack.simulator.paymentByReference(id)?.id ?? '', 'settled');
    await eventually(async () => {
      const row = await stack.db
        .selectFrom('webhook_inbox')
        .select('last_error')
        .where('donation_id', '=', id)
        .where('processed_at', 'is not', null)
        .executeTakeFirst();
      return row?.last_error === 'workflow-closed' ? row : undefined;
    });
    await backdateDonation(stack, id);

    const report = await runReconciliationNow(stack.temporal, taskQueue);

    expect(report.stuckRestarted).toContainEqual(
      expect.objectContaining({ donationId: id, workflow: 'TERMINATED', action: 'hand-back' }),
    );
    expect(await workflowResult(stack, id)).toMatchObject({ status: 'CONFIRMED', credited: true });
    const effects = await effectsOf(stack, id);
    expect(effects.ledger).toEqual([{ entry_type: 'DONATION', amount: 25_000 }]);
    expect(effects).toMatchObject({ donations: 1, workflows: 2, charges: 1 });
    expect(await totalsOf(stack, campaignId)).toEqual({
      confirmed_amount: 25_000,
      donation_count: 1,
    });

    // Decided now: the next run leaves it alone.
    const again = await runReconciliationNow(stack.temporal, taskQueue);
    expect(again.stuckRestarted.map((d) => d.donationId)).not.toContain(id);
  });

  it('delivers a webhook that was recorded but never delivered', async () => {
    const campaignId = await createCampaign(stack.db);
    const id = await donate(stack, campaignId, 15_000, { autoPayMs: -1, dropWebhooks: true });
    await waitForStatus(stack, id, 'AWAITING_PAYMENT');
    const row = await lostWebhook(id, 15_000);

    const report = await runReconciliationNow(stack.temporal, taskQueue);

    expect(report.inboxRedelivered).toBeGreaterThanOrEqual(1);
    expect(await workflowResult(stack, id)).toMatchObject({ status: 'CONFIRMED', credited: true });
    const delivered = await stack.db
      .selectFrom('webhook_inbox')
      .select(['processed_at', 'last_error'])
      .where('id', '=', row)
      .executeTakeFirstOrThrow();
    expect(delivered.processed_at).not.toBeNull();
    expect(delivered.last_error).toBeNull();
  });

  it('posts a refund and a dispute made at the provider whose notifications were lost', async () => {
    const campaignId = await createCampaign(stack.db);
    const id = await donate(stack, campaignId, 40_000);
    await waitForStatus(stack, id, 'CONFIRMED');
    // From now on the provider's notifications never arrive: only its records tell.
    stack.simulator.plan(id, { dropWebhooks: true, refundSettleMs: 0 });
    const payment = stack.simulator.paymentByReference(id)?.id ?? '';
    const refunded = stack.simulator.refundAtProvider(payment, 15_000);
    const disputed = stack.simulator.openDispute(payment, 5_000);

    const report = await runReconciliationNow(stack.temporal, taskQueue);

    expect(report.providerSweep.checked).toBeGreaterThanOrEqual(1);
    expect(report.providerSweep.followed).toBeGreaterThanOrEqual(2);
    const expected = [
      ledgerEntry('CHARGEBACK', disputed.id, -5_000),
      ledgerEntry('DONATION', '', 40_000),
      ledgerEntry('REFUND', refunded.id, -15_000),
    ];
    const sorted = async () =>
      (await ledgerWith(stack, id, 3)).sort((a, b) => a.entry_type.localeCompare(b.entry_type));
    expect(await sorted()).toEqual(expected);
    expect(await totalsOf(stack, campaignId)).toEqual({
      confirmed_amount: 20_000,
      donation_count: 1,
    });

    // A second sweep reads the same records and posts nothing twice.
    await runReconciliationNow(stack.temporal, taskQueue);
    expect(await sorted()).toEqual(expected);
  });

  it('purges the payer data of raw webhook bodies past their retention, keeping the event', async () => {
    const campaignId = await createCampaign(stack.db);
    const id = await donate(stack, campaignId, 12_000, { autoPayMs: -1, dropWebhooks: true });
    await waitForStatus(stack, id, 'AWAITING_PAYMENT');
    const payer = `payer-${Date.now()}@example.com`;
    const inbox = new WebhookInboxRepository(stack.db);
    const recordIgnored = async (ageDays: number) => {
      const row = await inbox.insert(
        'simulator',
        { kind: 'ignored', eventKey: `retention-${ageDays}-${id}`, reason: 'event payer.updated' },
        JSON.stringify({ type: 'payer.updated', data: { email: payer } }),
      );
      if (!row) throw new Error('inbox row not recorded');
      await backdateInbox(row.id, ageDays);
      return row.id;
    };
    const retention = stack.config.webhooks.bodyRetentionDays;
    // A paid event never delivered, past retention: reconciliation still has all it needs.
    const lost = await lostWebhook(id, 12_000);
    await backdateInbox(lost, retention + 1);
    const old = await recordIgnored(retention + 1);
    const fresh = await recordIgnored(retention - 1);
    const rows = () =>
      stack.db
        .selectFrom('webhook_inbox')
        .select(['id', 'provider', 'event_key', 'donation_id', 'payload', 'received_at'])
        .select(['raw_body', 'body_purged_at'])
        .where('id', 'in', [lost, old, fresh])
        .orderBy('id')
        .execute();
    const before = await rows();
    expect(before.every((r) => r.raw_body !== null && r.body_purged_at === null)).toBe(true);

    const report = await runReconciliationNow(stack.temporal, taskQueue);

    expect(report.bodiesPurged).toBe(2);
    const after = await rows();
    const kept = ({ raw_body: _b, body_purged_at: _p, ...rest }: (typeof after)[number]) => rest;
    expect(after.map(kept)).toEqual(before.map(kept));
    const byId = new Map(after.map((r) => [r.id, r]));
    for (const purged of [lost, old]) {
      expect(byId.get(purged)?.raw_body).toBeNull();
      expect(byId.get(purged)?.body_purged_at).toBeInstanceOf(Date);
    }
    expect(byId.get(fresh)?.raw_body).toContain(payer);
    expect(await workflowResult(stack, id)).toMatchObject({ status: 'CONFIRMED', credited: true });
    const run = await stack.db
      .selectFrom('reconciliation_runs')
      .select('bodies_purged')
      .where('run_id', '=', report.runId)
      .executeTakeFirstOrThrow();
    expect(run.bodies_purged).toBe(2);

    const again = await runReconciliationNow(stack.temporal, taskQueue);
    expect(again.bodiesPurged).toBe(0);
  });

  it('deletes the donor details of a start that never happened a week on, not a retried one', async () => {
    const details = new DonorDetailsRepository(stack.db);
    const donor = {
      name: 'Orphan Donor',
      email: `orphan-${Date.now()}@example.com`,
      anonymous: false,
    };
    const [abandoned, retried, fresh] = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of [abandoned, retried, fresh]) await details.save(id, { donor, message: 'hi' });
    await stack.db
      .updateTable('donor_details')
      .set({ created_at: sql<Date>`now() - interval '8 days'` })
      .where('donation_id', 'in', [abandoned, retried])
      .execute();
    // The client retried the failed start with the same key: the edge saved the same fields again.
    await details.save(retried, { donor, message: 'hi' });

    const report = await runReconciliationNow(stack.temporal, taskQueue);

    expect(report.donorDetailsPurged).toBe(1);
    const left = await stack.db
      .selectFrom('donor_details')
      .select('donation_id')
      .where('donation_id', 'in', [abandoned, retried, fresh])
      .execute();
    expect(left.map((r) => r.donation_id).sort()).toEqual([retried, fresh].sort());
    await stack.db
      .deleteFrom('donor_details')
      .where('donation_id', 'in', [retried, fresh])
      .execute();
  });

  describe('through the ops CLI', () => {
    it('reconcile shows the drift without --yes and repairs it with --yes', async () => {
      const campaignId = await createCampaign(stack.db);
      await waitForStatus(stack, await donate(stack, campaignId, 35_000), 'CONFIRMED');
      await corruptTotal(stack, campaignId, { amount: 1, count: 1 });
      const before = await snapshotOf(stack, [campaignId]);

      const dry = await ops(stack, 'reconcile');
      expect(dry.code).toBe(0);
      expect(dry.out).toMatch(new RegExp(`${campaignId}\\s+1\\s+35000`));
      expect(dry.out).toMatch(/Webhook bodies past retention \(payer data a run purges\): \d+/);
      expect(dry.out).toContain('Dry run: nothing was changed');
      expect(await snapshotOf(stack, [campaignId])).toEqual(before);

      const done = await ops(stack, 'reconcile', '--yes', '--json');
      expect(done.code).toBe(0);
      const report = JSON.parse(done.out) as ReconciliationReport;
      expect(report.repaired.map((r) => r.campaignId)).toEqual([campaignId]);
      expect(await totalsOf(stack, campaignId)).toEqual({
        confirmed_amount: 35_000,
        donation_count: 1,
      });
    });

    it('redeliver lists undelivered webhooks without --yes and delivers them with --yes', async () => {
      const campaignId = await createCampaign(stack.db);
      const id = await donate(stack, campaignId, 9_000, { autoPayMs: -1, dropWebhooks: true });
      await waitForStatus(stack, id, 'AWAITING_PAYMENT');
      const row = await lostWebhook(id, 9_000);
      const inboxRow = () =>
        stack.db
          .selectFrom('webhook_inbox')
          .selectAll()
          .where('id', '=', row)
          .executeTakeFirstOrThrow();
      const before = await inboxRow();

      const dry = await ops(stack, 'redeliver', '--older-than', '300');
      expect(dry.code).toBe(0);
      expect(dry.out).toContain(`lost-${id}`);
      expect(await inboxRow()).toEqual(before);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect((await effectsOf(stack, id)).ledger).toEqual([]);

      const done = await ops(stack, 'redeliver', '--older-than', '300', '--yes');
      expect(done.code).toBe(0);
      expect(done.out).toMatch(/Delivered [1-9]\d* of/);
      expect((await inboxRow()).processed_at).not.toBeNull();
      expect(await workflowResult(stack, id)).toMatchObject({
        status: 'CONFIRMED',
        credited: true,
      });
    });
  });
});
