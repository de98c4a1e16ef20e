import { randomUUID } from 'node:crypto';
import { ScheduleNotFoundError } from '@temporalio/client';
import { sql } from 'kysely';
import { WorkflowType, pledgePeriodWorkflowId, pledgeScheduleId } from '../../workflows/contracts';
import type { PledgePeriodWorkflow } from '../../workflows/contracts';
import {
  CLIENT_SECRET,
  OPERATOR_SECRET,
  OTHER_CLIENT_SECRET,
  createCampaign,
  eventually,
  startStack,
} from '../support/stack';
import type { Stack } from '../support/stack';
import { periodOf } from '../../src/pledges/pledge-calendar';
import { ops } from '../support/ops';
import { spawnWorker } from '../support/worker-process';
import { createServices } from '../../src/runtime/create-services';

interface PledgeAnswer {
  pledge: {
    id: string;
    status: string;
    amount: number;
    periods: { period: string; donationId: string; amount: number; status: string | null }[];
    links: { self: string; manage: string };
  };
  firstDonation: { id: string; status: string; paymentAction: { value: string } | null };
}

/** Every 10 s is a period here: the calendar compressed by configuration, not by sleeping. */
const PERIOD_SECONDS = 10;

/**
 * Monthly giving on the real stack (issue 26): a pledge charges its first period at once and
 * each later period as an ordinary donation whose ID derives from pledge and period; a schedule
 * fired twice for one period, with the worker killed mid-charge, charges it once.
 */
describe('pledges', () => {
  let stack: Stack;
  let campaignId: string;

  beforeAll(async () => {
    stack = await startStack({
      autoPayMs: 100,
      env: { PLEDGE_CALENDAR: `seconds:${PERIOD_SECONDS}` },
    });
    campaignId = await createCampaign(stack.db);
  });
  afterAll(async () => {
    // Schedules outlive the stack on the shared server: delete what the tests left.
    const pledges = await stack.db.selectFrom('pledges').select('id').execute();
    for (const { id } of pledges) {
      await stack.temporal.schedule
        .getHandle(pledgeScheduleId(id))
        .delete()
        .catch(() => undefined);
    }
    await stack.stop();
  });

  const call = (method: string, url: string, secret?: string, body?: unknown, key?: string) =>
    fetch(`${stack.apiUrl}${url}`, {
      method,
      headers: {
        ...(secret && { authorization: `Bearer ${secret}` }),
        ...(key && { 'idempotency-key': key }),
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const pledgeBody = (amount = 100_000) => ({
    campaignId,
    amount,
    currency: 'IDR',
    donor: { name: 'Sari', email: 'sari@example.org', anonymous: false },
    paymentMethod: 'qris',
    interval: 'monthly',
  });
  const create = async (key = `pledge-${randomUUID()}`, amount?: number) => {
    const response = await call('POST', '/v1/pledges', CLIENT_SECRET, pledgeBody(amount), key);
    expect(response.status).toBe(202);
    return (await response.json()) as PledgeAnswer;
  };
  /** The pledge's periods and the donations charged for it, as stored. */
  const charged = async (pledgeId: string) => {
    const periods = await stack.db
      .selectFrom('pledge_periods')
      .selectAll()
      .where('pledge_id', '=', pledgeId)
      .execute();
    const ids = periods.map((p) => p.donation_id);
    const donations =
      ids.length === 0
        ? []
        : await stack.db.selectFrom('donations').selectAll().where('id', 'in', ids).execute();
    const credits =
      ids.length === 0
        ? []
        : await stack.db
            .selectFrom('donation_ledger')
            .select(['donation_id', sql<number>`count(*)::int`.as('n')])
            .where('donation_id', 'in', ids)
            .where('entry_type', '=', 'DONATION')
            .groupBy('donation_id')
            .execute();
    return { periods, donations, credits };
  };
  /** Runs one action outside the schedule (a workflow of the period's type, now). */
  const runAction = (pledgeId: string) =>
    stack.temporal.workflow.execute<PledgePeriodWorkflow>(WorkflowType.pledgePeriod, {
      workflowId: `${pledgePeriodWorkflowId(pledgeId)}-manual-${randomUUID()}`,
      taskQueue: stack.config.temporal.taskQueue,
      args: [{ pledgeId }],
    });

  it('charges the first period at once, keeps one schedule, and answers a retry the same', async () => {
    const key = `pledge-${randomUUID()}`;
    const first = await create(key);
    expect(first.firstDonation.paymentAction?.value).toBeTruthy();
    expect(first.pledge.periods).toHaveLength(1);
    expect(first.pledge.periods[0]?.donationId).toBe(first.firstDonation.id);
    const again = await create(key);
    expect(again.pledge.id).toBe(first.pledge.id);
    expect(again.firstDonation.id).toBe(first.firstDonation.id);

    const schedule = await stack.temporal.schedule
      .getHandle(pledgeScheduleId(first.pledge.id))
      .describe();
    expect(schedule.spec.timezone).toBe('Asia/Jakarta');
    expect(schedule.policies.overlap).toBe('ALLOW_ALL');
    // The client reads its pledge; another client does not; the donor's link needs no key.
    expect((await call('GET', first.pledge.links.self, CLIENT_SECRET)).status).toBe(200);
    expect((await call('GET', first.pledge.links.self, OTHER_CLIENT_SECRET)).status).toBe(404);
    expect((await call('GET', first.pledge.links.manage)).status).toBe(200);
    const forged = first.pledge.links.manage.replace(/token=.*/, 'token=forged');
    expect((await call('GET', forged)).status).toBe(404);
  });

  it('charges each period once, whatever fires twice or dies mid-charge', async () => {
    const { pledge } = await create();
    const schedule = stack.temporal.schedule.getHandle(pledgeScheduleId(pledge.id));
    // Two manual triggers and a direct action, all in the current period, while the worker
    // is killed and replaced; the schedule's own actions go on every period meanwhile.
    await Promise.all([
      schedule.trigger('ALLOW_ALL'),
      schedule.trigger('ALLOW_ALL'),
      runAction(pledge.id),
      stack.restartWorker(),
    ]);
    // Wait for a period the schedule started itself, and its money.
    const { periods, donations, credits } = await eventually(
      async () => {
        const found = await charged(pledge.id);
        const done = found.donations.filter((d) => d.status === 'CONFIRMED');
        return found.periods.length >= 3 && done.length === found.periods.length
          ? found
          : undefined;
      },
      (PERIOD_SECONDS * 4 + 30) * 1000,
    );
    expect(new Set(periods.map((p) => p.period)).size).toBe(periods.length);
    expect(donations).toHaveLength(periods.length);
    for (const donation of donations) expect(donation.amount).toBe(100_000);
    expect(credits.every((row) => row.n === 1)).toBe(true);
    expect(credits).toHaveLength(periods.length);
    const payments = stack.simulator
      .payments()
      .filter((payment) => donations.some((d) => d.id === payment.reference));
    expect(payments).toHaveLength(donations.length);
  });

  it('pauses, resumes, changes the amount and cancels, each honoured from the next action', async () => {
    const key = `pledge-${randomUUID()}`;
    const { pledge, firstDonation } = await create(key, 50_000);
    const paused = await call('POST', `/v1/pledges/${pledge.id}/pause`, CLIENT_SECRET);
    expect(paused.status).toBe(200);
    expect((await runAction(pledge.id)).outcome).toBe('paused');
    // The donor resumes with their link; the client raises the amount.
    const resumed = await call('POST', pledge.links.manage.replace('/manage', '/manage/resume'));
    expect(resumed.status).toBe(200);
    const changed = await call('PATCH', `/v1/pledges/${pledge.id}`, CLIENT_SECRET, {
      amount: 75_000,
    });
    expect(((await changed.json()) as PledgeAnswer['pledge']).amount).toBe(75_000);
    const later = await eventually(
      async () => {
        const found = await charged(pledge.id);
        return found.donations.find((d) => d.amount === 75_000);
      },
      (PERIOD_SECONDS * 3 + 20) * 1000,
    );
    expect(later.amount).toBe(75_000);

    const cancelled = await call('POST', `/v1/pledges/${pledge.id}/cancel`, OPERATOR_SECRET);
    expect(((await cancelled.json()) as PledgeAnswer['pledge']).status).toBe('CANCELLED');
    await expect(
      stack.temporal.schedule.getHandle(pledgeScheduleId(pledge.id)).describe(),
    ).rejects.toBeInstanceOf(ScheduleNotFoundError);
    expect((await runAction(pledge.id)).outcome).toBe('cancelled');
    // Cancelled stays cancelled.
    const again = await call('POST', `/v1/pledges/${pledge.id}/resume`, CLIENT_SECRET);
    expect(again.status).toBe(422);
    // The same request once its answer is no longer kept (straight to the service): the same
    // pledge and first donation, still cancelled, and no schedule comes back.
    const services = createServices(stack.config, {
      db: stack.db,
      redis: stack.redis,
      temporal: stack.temporal,
      providers: stack.providers,
    });
    const retried = await services.pledges.create(
      { clientId: 'client-a', method: 'POST', route: '/v1/pledges', key },
      { ...pledgeBody(50_000), interval: 'monthly' },
      'retry-after-retention',
    );
    expect(retried.pledge).toMatchObject({ id: pledge.id, status: 'CANCELLED' });
    expect(retried.firstDonation.id).toBe(firstDonation.id);
    await expect(
      stack.temporal.schedule.getHandle(pledgeScheduleId(pledge.id)).describe(),
    ).rejects.toBeInstanceOf(ScheduleNotFoundError);
    // Operators see it in the ops CLI and the metrics.
    const listed = await ops(stack, 'pledges', '--status', 'CANCELLED', '--json');
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.out) as { id: string }[]).map((row) => row.id)).toContain(pledge.id);
    const metrics = await (await call('GET', '/metrics')).text();
    expect(metrics).toMatch(/galang_pledges\{status="cancelled"\} [1-9]/);
    expect(metrics).toMatch(/galang_pledges\{status="active"\} [1-9]/);
  });

  it('leaves a period uncharged and unrecorded once the campaign closes', async () => {
    const own = await createCampaign(stack.db);
    const response = await call(
      'POST',
      '/v1/pledges',
      CLIENT_SECRET,
      { ...pledgeBody(), campaignId: own },
      `pledge-${randomUUID()}`,
    );
    const { pledge } = (await response.json()) as PledgeAnswer;
    const closed = await call('POST', `/v1/campaigns/${own}/close`, OPERATOR_SECRET);
    expect(closed.status).toBe(200);
    // In the next period: an action then names a period the pledge has not started.
    const first = pledge.periods[0]?.period;
    const calendar = { kind: 'compressed', seconds: PERIOD_SECONDS } as const;
    await eventually(
      async () =>
        periodOf('monthly', new Date(), 'Asia/Jakarta', calendar) !== first ? true : undefined,
      (PERIOD_SECONDS + 5) * 1000,
    );
    const refused = await runAction(pledge.id);
    expect(refused.outcome).toBe('refused');
    expect(refused.donationId).toBeUndefined();
    const { periods } = await charged(pledge.id);
    expect(periods.map((p) => p.period)).toEqual([first]);
  });

  it('refuses a pledge a donation would be refused, keeping nothing', async () => {
    const before = await stack.db.selectFrom('pledges').select('id').execute();
    const response = await call(
      'POST',
      '/v1/pledges',
      CLIENT_SECRET,
      { ...pledgeBody(), campaignId: 'no-such-campaign' },
      `pledge-${randomUUID()}`,
    );
    expect(response.status).toBe(404);
    for (const body of [
      { ...pledgeBody(), interval: 'daily' },
      { ...pledgeBody(), dayOfPeriod: 32 },
      { ...pledgeBody(), timeZone: 'Not/A_Zone' },
    ]) {
      const refused = await call('POST', '/v1/pledges', CLIENT_SECRET, body, `p-${randomUUID()}`);
      expect(refused.status).toBe(400);
    }
    expect(await stack.db.selectFrom('pledges').select('id').execute()).toHaveLength(before.length);
  });
});

/**
 * The worker killed with SIGKILL in the middle of a period's charge, the period's action fired
 * three times (the schedule's own and two manual triggers), another worker started: the period
 * is charged once, one payment at the provider and one credit.
 */
describe('a pledge period whose worker is killed mid-charge', () => {
  it('charges the period once: one payment, one credit', async () => {
    const calendar = { PLEDGE_CALENDAR: 'seconds:20' };
    const stack = await startStack({ autoPayMs: 100, noWorker: true, env: calendar });
    let worker = await spawnWorker(stack, { env: calendar });
    try {
      const campaignId = await createCampaign(stack.db);
      const response = await fetch(`${stack.apiUrl}/v1/pledges`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${CLIENT_SECRET}`,
          'content-type': 'application/json',
          'idempotency-key': `pledge-kill-${randomUUID()}`,
        },
        body: JSON.stringify({
          campaignId,
          amount: 30_000,
          currency: 'IDR',
          donor: { name: 'Sari', email: 'sari@example.org', anonymous: false },
          paymentMethod: 'qris',
          interval: 'monthly',
        }),
      });
      expect(response.status).toBe(202);
      const { pledge } = (await response.json()) as PledgeAnswer;
      const schedule = stack.temporal.schedule.getHandle(pledgeScheduleId(pledge.id));
      // At the schedule's next action (a new period), two triggers more, and the worker dies.
      const next = (await schedule.describe()).info.nextActionTimes[0];
      if (!next) throw new Error('the schedule has no next action');
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, next.getTime() - Date.now())));
      await Promise.all([schedule.trigger('ALLOW_ALL'), schedule.trigger('ALLOW_ALL')]);
      await new Promise((resolve) => setTimeout(resolve, 300));
      await worker.kill9();
      worker = await spawnWorker(stack, { env: calendar });

      const periods = await eventually(async () => {
        const rows = await stack.db
          .selectFrom('pledge_periods as p')
          .innerJoin('donations as d', 'd.id', 'p.donation_id')
          .select(['p.period', 'p.donation_id', 'd.status'])
          .where('p.pledge_id', '=', pledge.id)
          .execute();
        return rows.length >= 2 && rows.every((row) => row.status === 'CONFIRMED')
          ? rows
          : undefined;
      }, 60_000);
      // The first period at creation, the new one once, whatever fired or died.
      expect(new Set(periods.map((row) => row.period)).size).toBe(periods.length);
      for (const { donation_id: id } of periods) {
        expect(stack.simulator.chargeCount(`${id}:create`)).toBe(1);
        const credits = await stack.db
          .selectFrom('donation_ledger')
          .select('amount')
          .where('donation_id', '=', id)
          .where('entry_type', '=', 'DONATION')
          .execute();
        expect(credits).toEqual([{ amount: 30_000 }]);
      }
      await schedule.delete();
    } finally {
      await worker.kill9();
      await stack.stop();
    }
  }, 180_000);
});
