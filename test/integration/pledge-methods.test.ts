import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { simpleParser } from 'mailparser';
import { sql } from 'kysely';
import { WorkflowType, pledgePeriodWorkflowId, pledgeScheduleId } from '../../workflows/contracts';
import type { PledgePeriodWorkflow } from '../../workflows/contracts';
import type { SavedMethodState } from '../../src/providers/simulator/simulator-saved-methods';
import { cardPledges } from '../support/card-pledges';
import { startCardStack } from '../support/card-stacks';
import type { CardProvider, CardStack } from '../support/card-stacks';
import { runReceipts } from '../support/mail-stack';
import type { MailStack } from '../support/mail-stack';
import { createCampaign, eventually } from '../support/stack';
import { periodOf } from '../../src/pledges/pledge-calendar';
import { deriveUuid } from '../../src/idempotency/idempotency-key';

/**
 * The real calendar: the schedules' own actions come next month, so the periods these tests run
 * (months ahead, by hand) are the only ones, and a card set to decline declines only theirs.
 */
const CALENDAR = { kind: 'real' } as const;
/** The client whose secret the pledges are made with (test/support/stack.ts). */
const CLIENT_ID = 'client-a';

/**
 * Saved payment methods and the dunning (issue 26), on the simulator and on Stripe's stand-in:
 * a card pledge keeps the card its first period was paid with and charges the next periods
 * without the donor; a declined period is tried again on PLEDGE_RETRY_DELAYS, then the pledge
 * pauses and the donor is told; a card that asks for authentication, and a QR pledge, get the
 * period's action by e-mail. The money is checked at the provider and in the ledger.
 */
describe.each(['simulator', 'stripe'] as const)('pledges with saved methods on %s', (name) => {
  let card: CardStack;
  let mail: MailStack;
  let cards: CardProvider;
  let campaignId: string;

  beforeAll(async () => {
    card = await startCardStack(name, `pledge-methods-${name}`, {
      autoPayMs: 100,
      env: {
        PLEDGE_RETRY_DELAYS: '2s,1s',
        // Receipt numbers name their mail's workflow: each stack's own on the shared server.
        RECEIPT_PREFIX: `P${randomUUID().replace(/-/g, '').slice(0, 6).toUpperCase()}`,
      },
    });
    ({ mail, cards } = card);
    campaignId = await createCampaign(mail.stack.db);
  });
  afterAll(async () => {
    await card.stop();
  });

  const { create, pledgeRow, referenceOf, keptMethod, ahead, runPeriod } = cardPledges(
    () => card,
    () => campaignId,
  );
  /** The donation ID of a period's first attempt, as the pledge service derives it. */
  const firstAttemptId = (pledgeId: string, at: Date) => {
    const period = periodOf('monthly', at, 'Asia/Jakarta', CALENDAR);
    return deriveUuid({
      clientId: CLIENT_ID,
      method: 'POST',
      route: '/v1/pledges/:id/periods',
      key: `${pledgeId}:${period}`,
    });
  };
  /** The donor pays the period's payment only once the test says so (after the e-mail). */
  const holdPayment = (pledgeId: string, at: Date) => {
    cards.hold(firstAttemptId(pledgeId, at));
  };
  /** Runs next period, whose payment waits for the donor: they pay once they got the e-mail. */
  const runPaidOnceMailed = async (email: string, pledgeId: string) => {
    const at = ahead(1);
    holdPayment(pledgeId, at);
    const running = runPeriod(pledgeId, at);
    await eventually(
      async () => ((await periodMails(email)).length > 0 ? true : undefined),
      30_000,
    );
    cards.pay(await referenceOf(firstAttemptId(pledgeId, at)));
    return running;
  };
  const setCard = (method: string, state: SavedMethodState) => {
    cards.setCard(method, state);
  };
  /** A period's attempts, their donations' status, their payments and credits. */
  const attempts = async (pledgeId: string, period: string) => {
    const rows = await mail.stack.db
      .selectFrom('pledge_periods as p')
      .innerJoin('donations as d', 'd.id', 'p.donation_id')
      .select(['p.attempt', 'p.donation_id', 'd.status'])
      .where('p.pledge_id', '=', pledgeId)
      .where('p.period', '=', period)
      .orderBy('p.attempt')
      .execute();
    const ids = rows.map((row) => row.donation_id);
    const credits = await mail.stack.db
      .selectFrom('donation_ledger')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('donation_id', 'in', ids)
      .where('entry_type', '=', 'DONATION')
      .executeTakeFirstOrThrow();
    return { rows, credits: credits.n, payments: cards.payments(ids) };
  };
  const mailsTo = async (email: string) => {
    const parsed = await Promise.all(
      mail.sink.received().map(async (file) => simpleParser(readFileSync(file))),
    );
    return parsed.filter((message) => message.to && JSON.stringify(message.to).includes(email));
  };
  /** The donor's e-mails about their pledge's periods (their receipts aside). */
  const periodMails = async (email: string) =>
    (await mailsTo(email)).filter((message) => !message.subject?.startsWith('Receipt'));

  it('keeps the first period’s card and charges the next without the donor', async () => {
    const { pledge, firstDonation, email } = await create('card');
    const card = await keptMethod(pledge.id, firstDonation.id);
    // The provider's own reference: a simulator method, or Stripe's Customer and card.
    expect(card).toMatch(name === 'simulator' ? /^sm_\w/ : /^cus_\w+\/pm_\w+$/);

    const outcome = await runPeriod(pledge.id, ahead(1));
    expect(outcome).toMatchObject({ outcome: 'paid', attempt: 0 });
    const { rows, credits, payments } = await attempts(pledge.id, outcome.period);
    expect(rows).toEqual([expect.objectContaining({ attempt: 0, status: 'CONFIRMED' })]);
    expect(credits).toBe(1);
    expect(payments).toEqual([{ status: 'paid', charged: true }]);
    // Charged at once: nothing for the donor to do, so no e-mail about the period.
    expect(await periodMails(email)).toEqual([]);
  });

  it('tries a declined period again, and stops once one attempt is paid', async () => {
    const { pledge, firstDonation } = await create('card');
    const card = await keptMethod(pledge.id, firstDonation.id);
    setCard(card, 'insufficient_funds');
    const running = runPeriod(pledge.id, ahead(1));
    // The first attempt is declined; the donor's bank has money again before the retry.
    await eventually(async () => {
      const pending = await mail.stack.db
        .selectFrom('pledge_periods as p')
        .innerJoin('donations as d', 'd.id', 'p.donation_id')
        .select('d.status')
        .where('p.pledge_id', '=', pledge.id)
        .where('p.attempt', '=', 0)
        .where('d.status', '=', 'FAILED')
        .execute();
      return pending.length > 0 || undefined;
    }, 30_000);
    setCard(card, 'ok');
    const outcome = await running;
    expect(outcome).toMatchObject({ outcome: 'paid', attempt: 1 });
    const { rows, credits, payments } = await attempts(pledge.id, outcome.period);
    expect(rows.map((row) => row.status)).toEqual(['FAILED', 'CONFIRMED']);
    expect(credits).toBe(1);
    expect(payments.map((payment) => payment.status)).toEqual(['declined', 'paid']);
  });

  it('pauses the pledge and tells the donor once every attempt failed', async () => {
    const { pledge, firstDonation, email } = await create('card');
    const card = await keptMethod(pledge.id, firstDonation.id);
    setCard(card, 'expired_card');
    const outcome = await runPeriod(pledge.id, ahead(1));
    expect(outcome).toMatchObject({ outcome: 'failed', attempt: 2 });
    const { rows, credits, payments } = await attempts(pledge.id, outcome.period);
    expect(rows.map((row) => row.status)).toEqual(['FAILED', 'FAILED', 'FAILED']);
    expect(credits).toBe(0);
    expect(payments).toHaveLength(3);
    const row = await pledgeRow(pledge.id);
    expect(row).toMatchObject({
      status: 'PAUSED',
      paused_reason: 'payment-failed',
      saved_method: null,
    });
    const schedule = await mail.stack.temporal.schedule
      .getHandle(pledgeScheduleId(pledge.id))
      .describe();
    expect(schedule.state.paused).toBe(true);
    const told = await eventually(async () => {
      const found = await periodMails(email);
      return found.length > 0 ? found : undefined;
    }, 30_000);
    expect(told).toHaveLength(1);
    expect(told[0]?.text).toContain(pledge.links.manage);
    // A paused pledge charges nothing, whatever fires.
    expect((await runPeriod(pledge.id, ahead(2))).outcome).toBe('paused');
  });

  it('follows a failed period again without ending it early or pausing a resumed pledge', async () => {
    const { pledge, firstDonation } = await create('card');
    const card = await keptMethod(pledge.id, firstDonation.id);
    setCard(card, 'expired_card');
    const at = ahead(1);
    expect(await runPeriod(pledge.id, at)).toMatchObject({ outcome: 'failed', attempt: 2 });
    // The donor resumes; then the period's action runs again (a second action, a reset).
    const resumed = await fetch(
      `${mail.stack.apiUrl}${pledge.links.manage.replace('/manage', '/manage/resume')}`,
      {
        method: 'POST',
      },
    );
    expect(resumed.status).toBe(200);
    const again = await runPeriod(pledge.id, at);
    expect(again).toMatchObject({ outcome: 'failed', attempt: 2 });
    expect((await pledgeRow(pledge.id)).status).toBe('ACTIVE');
    const { rows, credits, payments } = await attempts(pledge.id, again.period);
    expect(rows).toHaveLength(3);
    expect(credits).toBe(0);
    expect(payments).toHaveLength(3);
  });

  it('reads an earlier attempt back before a retry: paid after all, nothing charged again', async () => {
    const { pledge, firstDonation } = await create('card');
    const card = await keptMethod(pledge.id, firstDonation.id);
    setCard(card, 'insufficient_funds');
    const period = await mail.stack.temporal.workflow.start<PledgePeriodWorkflow>(
      WorkflowType.pledgePeriod,
      {
        workflowId: `${pledgePeriodWorkflowId(pledge.id)}-test-${randomUUID()}`,
        taskQueue: mail.stack.config.temporal.taskQueue,
        args: [{ pledgeId: pledge.id, at: ahead(1).toISOString() }],
      },
    );
    // The first attempt was declined and its end seen: the workflow waits for the retry.
    await eventually(async () => {
      const { events } = await period.fetchHistory();
      return events?.some((event) => event.timerStartedEventAttributes) || undefined;
    }, 30_000);
    const declined = await mail.stack.db
      .selectFrom('pledge_periods as p')
      .innerJoin('donations as d', 'd.id', 'p.donation_id')
      .select(['d.status', 'd.provider_reference'])
      .where('p.pledge_id', '=', pledge.id)
      .where('p.attempt', '=', 0)
      .where('d.status', '=', 'FAILED')
      .executeTakeFirstOrThrow();
    // The charge is paid after all (the bank settles late, the donor confirms it) before the
    // retry, 2 s later, reads it back.
    cards.pay(declined.provider_reference ?? '');
    const running = period.result();
    const outcome = await running;
    expect(outcome).toMatchObject({ outcome: 'paid', attempt: 1 });
    expect(outcome.donationId).toBeUndefined();
    const credited = await eventually(async () => {
      const found = await attempts(pledge.id, outcome.period);
      return found.credits === 1 ? found : undefined;
    }, 30_000);
    expect(credited.rows).toHaveLength(1);
    expect(credited.payments).toHaveLength(1);
  });

  it('mails the period’s action when the card asks the donor to authenticate', async () => {
    const { pledge, firstDonation, email } = await create('card');
    const card = await keptMethod(pledge.id, firstDonation.id);
    setCard(card, 'authentication_required');
    const outcome = await runPaidOnceMailed(email, pledge.id);
    expect(outcome).toMatchObject({ outcome: 'paid', attempt: 0 });
    const told = await periodMails(email);
    expect(told).toHaveLength(1);
    expect(told[0]?.subject).toContain(outcome.period);
    expect(told[0]?.text).toContain(pledge.links.manage);
    expect((await attempts(pledge.id, outcome.period)).credits).toBe(1);
  });

  it('e-mails the donor’s management link with a period’s receipt', async () => {
    const { pledge, firstDonation, email } = await create('card');
    await keptMethod(pledge.id, firstDonation.id);
    await runReceipts(mail.stack);
    const receipt = await eventually(async () => {
      const found = (await mailsTo(email)).filter((m) => m.subject?.startsWith('Receipt'));
      return found.length > 0 ? found : undefined;
    }, 30_000);
    expect(receipt).toHaveLength(1);
    expect(receipt[0]?.text).toContain(`${mail.stack.config.publicUrl}${pledge.links.manage}`);
  });

  // Stripe's adapter takes cards only; QR codes are the simulator's (and Midtrans', Xendit's).
  if (name === 'simulator') {
    it('mails every period of a QR pledge its own action; the first went to the client', async () => {
      const { pledge, email } = await create('qris');
      const outcome = await runPaidOnceMailed(email, pledge.id);
      expect(outcome).toMatchObject({ outcome: 'paid', attempt: 0 });
      const told = await periodMails(email);
      expect(told).toHaveLength(1);
      const payment = mail.stack.simulator.paymentByReference(outcome.donationId ?? '');
      expect(told[0]?.text).toContain(payment?.action.value);
      expect((await pledgeRow(pledge.id)).saved_method).toBeNull();
    });
  }
});
