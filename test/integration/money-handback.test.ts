import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { donationWorkflowId } from '../../workflows/contracts';
import { createServices } from '../../src/runtime/create-services';
import { runReconciliationNow } from '../../src/reconciliation/reconciliation-schedule';
import { getStateQuery } from '../../workflows/contracts';
import { waitForStatus, workflowResult } from '../support/donations';
import { ledgerOf, paymentOf, rowOf } from '../support/money';
import { ops } from '../support/ops';
import { backdateDonation, donate } from '../support/reconciliation';
import { createCampaign, eventually, startStack } from '../support/stack';
import type { Stack } from '../support/stack';

/**
 * Issue 12, defects 8 and 9: a donation handed back by reconciliation or reset by an operator
 * after the provider's idempotency window (Stripe keeps keys 24 hours; the simulator is told to
 * forget them) reuses the payment it has, so the donor's payment is the one decided; give-ups
 * are marked on the donation's row; and reconciliation pages past the rows it leaves alone.
 */
describe('hand-back, reset and reconciliation paging', () => {
  let stack: Stack;
  let campaignId: string;
  let taskQueue: string;

  beforeAll(async () => {
    stack = await startStack({ autoPayMs: -1, paymentTimeoutSeconds: 30 });
    taskQueue = stack.config.temporal.taskQueue;
  });
  beforeEach(async () => {
    campaignId = await createCampaign(stack.db);
  });
  afterAll(async () => {
    await stack.stop();
  });

  /** A donation waiting for its payment whose workflow an operator terminated. */
  async function stuckDonation(amount: number) {
    const id = await donate(stack, campaignId, amount, { autoPayMs: -1 });
    await waitForStatus(stack, id, 'AWAITING_PAYMENT');
    const payment = await paymentOf(stack, id);
    await stack.temporal.workflow.getHandle(donationWorkflowId(id)).terminate('test: stuck');
    return { id, payment };
  }

  /** The open donations a reconciliation run would look at now, and what it would do. */
  const plan = () =>
    createServices(stack.config, {
      db: stack.db,
      redis: stack.redis,
      temporal: stack.temporal,
      providers: stack.providers,
    })
      .reconciler.plan()
      .then((p) => p.stuck);

  it('hands back a donation past the idempotency window on the payment the donor paid', async () => {
    const { id, payment } = await stuckDonation(25_000);
    // The donor pays while nobody decides the donation; then the provider forgets the key.
    stack.simulator.transition(payment, 'settled');
    stack.simulator.forgetIdempotencyKeys();
    await backdateDonation(stack, id);

    const report = await runReconciliationNow(stack.temporal, taskQueue);

    expect(report.stuckRestarted).toContainEqual(
      expect.objectContaining({ donationId: id, action: 'hand-back' }),
    );
    expect(await workflowResult(stack, id)).toMatchObject({ status: 'CONFIRMED', credited: true });
    expect(stack.simulator.chargeCount(`${id}:create`)).toBe(1);
    expect((await rowOf(stack, id)).provider_reference).toBe(payment);
    expect(await ledgerOf(stack, id)).toEqual([
      { entry_type: 'DONATION', external_ref: '', amount: 25_000 },
    ]);
  });

  it('resets a donation past the idempotency window without a second payment', async () => {
    const id = await donate(stack, campaignId, 22_000, { autoPayMs: -1 });
    const payment = await paymentOf(stack, id);
    const handle = stack.temporal.workflow.getHandle(donationWorkflowId(id));
    const { runId } = await handle.describe();
    stack.simulator.forgetIdempotencyKeys();

    const reset = await ops(stack, 'reset', id, '--to', 'first-task', '--yes');
    expect(reset.code).toBe(0);
    // The new run has started the donation again, on the payment it already had.
    await eventually(async () => {
      if ((await handle.describe()).runId === runId) return undefined;
      const state = await handle.query(getStateQuery);
      return state.status === 'AWAITING_PAYMENT' ? state : undefined;
    });
    expect((await handle.query(getStateQuery)).providerReference).toBe(payment);
    expect(stack.simulator.chargeCount(`${id}:create`)).toBe(1);

    stack.simulator.transition(payment, 'settled');
    expect(await handle.result()).toMatchObject({ status: 'CONFIRMED', credited: true });
    expect(stack.simulator.chargeCount(`${id}:create`)).toBe(1);
    expect(await ledgerOf(stack, id)).toHaveLength(1);
  });

  it('marks a donation handed back once and closed again as a dead letter on its row', async () => {
    const { id, payment } = await stuckDonation(18_000);
    // At the bank: the handed-back run can neither cancel it nor credit it.
    stack.simulator.transition(payment, 'processing');
    await backdateDonation(stack, id);

    const first = await runReconciliationNow(stack.temporal, taskQueue);
    expect(first.stuckRestarted).toContainEqual(expect.objectContaining({ donationId: id }));
    const handle = stack.temporal.workflow.getHandle(donationWorkflowId(id));
    await eventually(async () => {
      const state = await handle.query(getStateQuery);
      return state.timeline.some((t) => t.event.startsWith('cancel')) ? true : undefined;
    });
    await handle.terminate('test: the handed-back run is stuck too');

    const second = await runReconciliationNow(stack.temporal, taskQueue);
    expect(second.stuckRestarted.map((d) => d.donationId)).not.toContain(id);
    const row = await rowOf(stack, id);
    expect(row.dead_lettered_at).toEqual(expect.any(Date));
    expect(row.dead_letter_reason).toMatch(/^handed back by .* and closed TERMINATED$/);
    expect(row.status).toBe('AWAITING_PAYMENT');
    // Skipped in SQL from now on: not even looked at.
    expect((await plan()).map((d) => d.donationId)).not.toContain(id);
  });

  it('pages past more than a page of rows it leaves alone to a newer stuck donation', async () => {
    // 101 old open donations whose workflows run on a queue no worker polls: every reconciler
    // leaves them alone, and their ids sort before any other.
    const prefix = `00000000-${randomUUID().slice(9, 13)}-4000-8000-`;
    const parked = Array.from({ length: 101 }, (_, i) => `${prefix}${String(i).padStart(12, '0')}`);
    const nobody = `nobody-${randomUUID()}`;
    await stack.db
      .insertInto('donations')
      .values(
        parked.map((id) => ({
          id,
          client_id: 'client-a',
          idempotency_key: `parked-${id}`,
          campaign_id: campaignId,
          amount: 10_000,
          currency: 'IDR',
          donor_name: 'Ani',
          donor_email: 'ani@example.com',
          donor_anonymous: false,
          payment_method: 'qris',
          status: 'AWAITING_PAYMENT' as const,
          provider: 'simulator',
          workflow_id: donationWorkflowId(id),
          created_at: sql<Date>`now() - interval '3 hours'`,
        })),
      )
      .execute();
    try {
      for (let i = 0; i < parked.length; i += 20) {
        await Promise.all(
          parked.slice(i, i + 20).map((id) =>
            stack.temporal.workflow.start('donationWorkflow', {
              workflowId: donationWorkflowId(id),
              taskQueue: nobody,
              args: [],
            }),
          ),
        );
      }
      const { id, payment } = await stuckDonation(12_000);
      stack.simulator.transition(payment, 'settled');
      await backdateDonation(stack, id);

      const report = await runReconciliationNow(stack.temporal, taskQueue);

      expect(report.stuckRestarted).toContainEqual(
        expect.objectContaining({ donationId: id, action: 'hand-back' }),
      );
      expect(report.stuckRestarted.map((d) => d.donationId)).not.toContain(parked[0]);
      expect(await workflowResult(stack, id)).toMatchObject({
        status: 'CONFIRMED',
        credited: true,
      });
      expect(stack.simulator.chargeCount(`${id}:create`)).toBe(1);

      // Once they are dead letters, reconciliation does not read them at all.
      await stack.db
        .updateTable('donations')
        .set({ dead_lettered_at: sql<Date>`now()`, dead_letter_reason: 'test: parked' })
        .where('id', 'in', parked)
        .execute();
      const planned = new Set((await plan()).map((d) => d.donationId));
      expect(parked.filter((p) => planned.has(p))).toEqual([]);
    } finally {
      await Promise.all(
        parked.map((id) =>
          stack.temporal.workflow
            .getHandle(donationWorkflowId(id))
            .terminate('test: parked')
            .catch(() => undefined),
        ),
      );
      await stack.db.deleteFrom('donations').where('id', 'in', parked).execute();
    }
  });
});
