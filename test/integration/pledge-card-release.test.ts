import { randomUUID } from 'node:crypto';
import {
  KeptMethodReleaser,
  MAX_RELEASE_ATTEMPTS,
  RELEASE_BUDGET_MS,
} from '../../src/pledges/kept-method-releaser';
import { KeptMethodReleases } from '../../src/pledges/kept-method-releases';
import type { PaymentProvider } from '../../src/providers/payment-provider';
import { runReconciliationNow } from '../../src/reconciliation/reconciliation-schedule';
import { cardPledges } from '../support/card-pledges';
import { startCardStack } from '../support/card-stacks';
import type { CardStack } from '../support/card-stacks';
import { OPERATOR_SECRET, createCampaign } from '../support/stack';

/**
 * A card a pledge lets go of (a cancel, a pause after failed dunning, the donor's erasure) is
 * released at its provider, on the simulator and on Stripe's stand-in (the pledge's Customer
 * deleted, docs.stripe.com/api/customers/delete): recorded in the transaction that let it go,
 * released by the next reconciliation run, once.
 */
describe.each(['simulator', 'stripe'] as const)('kept cards let go on %s', (name) => {
  let card: CardStack;
  let campaignId = '';
  const pledges = cardPledges(
    () => card,
    () => campaignId,
  );

  beforeAll(async () => {
    card = await startCardStack(name, `card-release-${name}`, {
      autoPayMs: 100,
      env: {
        PLEDGE_RETRY_DELAYS: 'none',
        RECEIPT_PREFIX: `R${randomUUID().replace(/-/g, '').slice(0, 6).toUpperCase()}`,
      },
    });
    campaignId = await createCampaign(card.mail.stack.db);
  });
  afterAll(async () => {
    await card.stop();
  });

  const asOperator = (path: string, body?: unknown) =>
    fetch(`${card.mail.stack.apiUrl}${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${OPERATOR_SECRET}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const releases = (pledgeIds: string[]) =>
    card.mail.stack.db
      .selectFrom('kept_method_releases')
      .selectAll()
      .where('pledge_id', 'in', pledgeIds)
      .orderBy('let_go_at')
      .execute();
  const reconcile = () =>
    runReconciliationNow(card.mail.stack.temporal, card.mail.stack.config.temporal.taskQueue);
  /** A card pledge whose first period was paid: its kept card. */
  const pledgeWithCard = async () => {
    const created = await pledges.create('card');
    const method = await pledges.keptMethod(created.pledge.id, created.firstDonation.id);
    return { ...created, method };
  };

  it('releases each card a pledge lets go of at its provider, once', async () => {
    const cancelled = await pledgeWithCard();
    expect((await asOperator(`/v1/pledges/${cancelled.pledge.id}/cancel`)).status).toBe(200);
    const dunned = await pledgeWithCard();
    card.cards.setCard(dunned.method, 'expired_card');
    const period = await pledges.runPeriod(dunned.pledge.id, pledges.ahead(1));
    expect(period).toMatchObject({ outcome: 'failed' });
    const erased = await pledgeWithCard();
    expect((await asOperator('/v1/donor-erasures', { email: erased.email })).status).toBe(200);
    const ours = [cancelled, dunned, erased];
    const ids = ours.map((one) => one.pledge.id);
    for (const id of ids) expect((await pledges.pledgeRow(id)).saved_method).toBeNull();

    // Let go in the transaction that changed the pledge; still held at the provider.
    const recorded = await releases(ids);
    expect(recorded.map((row) => [row.pledge_id, row.saved_method, row.released_at])).toEqual(
      ours.map((one) => [one.pledge.id, one.method, null]),
    );
    expect(ours.map((one) => card.cards.released(one.method))).toEqual([false, false, false]);

    const report = await reconcile();
    expect(report.keptMethods.released).toBeGreaterThanOrEqual(3);
    expect(ours.map((one) => card.cards.released(one.method))).toEqual([true, true, true]);
    const done = await releases(ids);
    expect(done.every((row) => row.released_at !== null)).toBe(true);
    // A second run that overlapped this one (an operator's beside the schedule) marks nothing.
    const twice = { provider: name, savedMethod: cancelled.method, pledgeId: '', attempts: 0 };
    await expect(new KeptMethodReleases(card.mail.stack.db).released(twice)).resolves.toBe(false);
    expect(await releases(ids)).toEqual(done);
    // A release repeated (a retry whose answer was lost) finds it done; a run releases no more.
    const adapter = card.mail.stack.providers.get(name);
    await expect(adapter?.releaseMethod?.(cancelled.method)).resolves.toBeUndefined();
    expect((await reconcile()).keptMethods).toEqual({ released: 0, failed: 0, leftForOperator: 0 });
  });

  it('tries a release the provider failed again next run, and leaves a hopeless one to an operator', async () => {
    const flaky = await pledgeWithCard();
    const hopeless = await pledgeWithCard();
    card.cards.failNextRelease(flaky.method);
    for (const { pledge } of [flaky, hopeless]) {
      expect((await asOperator(`/v1/pledges/${pledge.id}/cancel`)).status).toBe(200);
    }
    // The hopeless one has been tried all but once already.
    await card.mail.stack.db
      .updateTable('kept_method_releases')
      .set({ attempts: MAX_RELEASE_ATTEMPTS - 1 })
      .where('pledge_id', '=', hopeless.pledge.id)
      .execute();
    card.cards.failNextRelease(hopeless.method);

    expect((await reconcile()).keptMethods).toEqual({ released: 0, failed: 1, leftForOperator: 1 });
    const [flakyRow, hopelessRow] = await releases([flaky.pledge.id, hopeless.pledge.id]);
    expect(flakyRow).toMatchObject({ attempts: 1, released_at: null });
    expect(flakyRow?.last_error).toMatch(/503|unavailable/i);
    expect(hopelessRow).toMatchObject({ attempts: MAX_RELEASE_ATTEMPTS, released_at: null });

    expect((await reconcile()).keptMethods).toEqual({ released: 1, failed: 0, leftForOperator: 0 });
    expect(card.cards.released(flaky.method)).toBe(true);
    expect(card.cards.released(hopeless.method)).toBe(false);
  });

  it('starts no release past its budget: a slow provider leaves the rest to the next run', async () => {
    const slow = [await pledgeWithCard(), await pledgeWithCard(), await pledgeWithCard()];
    for (const { pledge } of slow) {
      expect((await asOperator(`/v1/pledges/${pledge.id}/cancel`)).status).toBe(200);
    }
    // Each release takes 60 % of the budget (a provider answering at its timeout's edge).
    let clock = 0;
    const asked: string[] = [];
    const provider = {
      releaseMethod: (method: string) => {
        asked.push(method);
        clock += RELEASE_BUDGET_MS * 0.6;
        return Promise.resolve();
      },
    } as unknown as PaymentProvider;
    const releaser = new KeptMethodReleaser(
      new KeptMethodReleases(card.mail.stack.db),
      new Map([[name, provider]]),
      () => clock,
    );
    const log = { warn: () => undefined };
    expect(await releaser.releaseDue(log)).toEqual({ released: 2, failed: 0, leftForOperator: 0 });
    expect(asked).toEqual(slow.slice(0, 2).map((one) => one.method));
    expect((await releases([slow[2]?.pledge.id ?? '']))[0]).toMatchObject({
      attempts: 0,
      released_at: null,
    });
    expect(await releaser.releaseDue(log)).toEqual({ released: 1, failed: 0, leftForOperator: 0 });
  });
});
