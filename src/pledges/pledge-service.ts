import { DONATION_REFUSALS } from '../donations/donation-failures';
import type { DonationAccepted } from '../donations/donation-schemas';
import type { DonationService } from '../donations/donation-service';
import { isTimeZone } from '../config/time-zone';
import { AppError } from '../errors/error-catalogue';
import type { ErrorCode } from '../errors/error-catalogue';
import { deriveUuid } from '../idempotency/idempotency-key';
import type { IdempotencyScope } from '../idempotency/idempotency-key';
import type { DonationRequest, PledgePeriodOutcome } from '../../workflows/contracts';
import { periodOf } from './pledge-calendar';
import type { PledgeCalendar, PledgeInterval } from './pledge-calendar';
import type { Pledge, PledgeRepository } from './pledge-repository';
import type { PledgeBilling } from './pledge-billing';
import type { PledgeLinks } from './pledge-links';
import type { PledgeSchedules } from './pledge-schedules';
import { pledgeView } from './pledge-views';
import type { PledgeView } from './pledge-views';

/** A pledge as a client asks for it: a donation's fields, how often, on which day, where. */
export interface PledgeRequest extends DonationRequest {
  interval: PledgeInterval;
  dayOfPeriod?: number | undefined;
  timeZone?: string | undefined;
}

export interface PledgeServiceDeps {
  pledges: PledgeRepository;
  schedules: PledgeSchedules;
  donations: DonationService;
  calendar: PledgeCalendar;
  /** The default time zone of a pledge's calendar (PLEDGE_TIME_ZONE). */
  timeZone: string;
  /** The provider new pledges take; each pledge's periods go through its own, kept on its row. */
  provider: string;
  /** The donor's links to their pledges. */
  links: PledgeLinks;
  /** Kept methods, the donor's notices and the dunning. */
  billing: PledgeBilling;
}

/** Who asks: a client (its own pledges), an operator, or the donor with the pledge's link. */
export type PledgeAccess = { client: string } | { operator: true } | { token: string };

/** A period's refusals that no retry of the action changes: the period is left uncharged. */
const REFUSALS = new Set<ErrorCode>(DONATION_REFUSALS);

/**
 * Monthly giving (docs/pledges.md): a pledge is a row and a Temporal Schedule; each period is an
 * ordinary donation (one per attempt) whose ID derives from pledge, period and attempt, started
 * through the same service as any donation, so an attempt is charged once whatever fires twice,
 * retries or resets. Attempt 0's ID keeps the period's own key, as before the dunning.
 */
export class PledgeService {
  constructor(private readonly deps: PledgeServiceDeps) {}

  /**
   * Refuses what a donation would be refused, keeps the pledge, creates its schedule and
   * charges the current period at once: the answer carries that donation's payment action.
   */
  async create(
    scope: IdempotencyScope,
    request: PledgeRequest,
    correlationId: string,
  ): Promise<{ pledge: PledgeView; firstDonation: DonationAccepted }> {
    const timeZone = request.timeZone ?? this.deps.timeZone;
    if (!isTimeZone(timeZone)) {
      throw new AppError('validation-failed', { detail: `${timeZone} is not a time zone.` });
    }
    if (request.interval === 'weekly' && (request.dayOfPeriod ?? 1) > 7) {
      throw new AppError('validation-failed', {
        detail: 'A weekly pledge charges on day 1 (Monday) to 7 (Sunday).',
      });
    }
    await this.deps.donations.assertAcceptable(request);
    const now = new Date();
    const pledge = await this.deps.pledges.insert({
      id: deriveUuid(scope),
      clientId: scope.clientId,
      idempotencyKey: scope.key,
      campaignId: request.campaignId,
      amount: request.amount,
      currency: request.currency,
      interval: request.interval,
      dayOfPeriod: request.dayOfPeriod ?? dayToday(request.interval, now, timeZone),
      timeZone,
      paymentMethod: request.paymentMethod,
      provider: this.deps.provider,
      donor: request.donor,
      message: request.message ?? null,
    });
    // A request again (after its answer's retention) finds the pledge as it is now: a
    // cancelled one gets no schedule back, and its first period is the creation's, charged once.
    if (pledge.status !== 'CANCELLED') {
      await this.temporal(() => this.deps.schedules.ensure(pledge));
    }
    const started = await this.startPeriod(pledge, pledge.createdAt, correlationId);
    if (!started) throw new AppError('pledge-cancelled');
    const { accepted } = started;
    // The first period's own workflow follows it: its kept method, its dunning.
    await this.temporal(() => this.deps.schedules.followFirstPeriod(pledge));
    return { pledge: await this.view(pledge), firstDonation: accepted };
  }

  /**
   * One attempt of a period (0, then the dunning's retries): charges the period `at` falls in,
   * unless the pledge is paused or cancelled now (read from Postgres, whatever the schedule's
   * state), or an earlier attempt was paid after all (read back from the provider).
   */
  async chargePeriod(
    pledgeId: string,
    at: Date,
    correlationId: string,
    attempt = 0,
  ): Promise<PledgePeriodOutcome> {
    const pledge = await this.deps.pledges.find(pledgeId);
    if (!pledge) throw new AppError('pledge-not-found');
    const period = periodOf(pledge.interval, at, pledge.timeZone, this.deps.calendar);
    const none = { period, attempt, donationId: undefined };
    if (pledge.status !== 'ACTIVE') {
      return { ...none, outcome: pledge.status === 'PAUSED' ? 'paused' : 'cancelled' };
    }
    // An attempt recorded and started is followed to its end, whatever a start would answer
    // now (a declined one's is a refusal): a retried step or a second action must not end the
    // period early.
    const recorded = await this.deps.billing.startedAttempt(pledgeId, period, attempt);
    if (recorded) return { ...none, outcome: 'started', donationId: recorded };
    if (attempt > 0 && (await this.deps.billing.earlierAttemptPaid(pledgeId, period, attempt))) {
      return { ...none, outcome: 'paid' };
    }
    try {
      // No donor waits on a scheduled period: start it, and let its payment action come.
      const started = await this.startPeriod(pledge, at, correlationId, {
        waitForAction: false,
        attempt,
      });
      if (!started) return { ...none, outcome: 'cancelled' };
      return { ...none, outcome: 'started', donationId: started.accepted.id };
    } catch (error) {
      if (error instanceof AppError && REFUSALS.has(error.code)) {
        return { ...none, outcome: 'refused' };
      }
      throw error;
    }
  }

  async get(id: string, access: PledgeAccess): Promise<PledgeView> {
    return this.view(await this.find(id, access));
  }

  async pause(id: string, access: PledgeAccess): Promise<PledgeView> {
    const pledge = await this.move(id, access, 'PAUSED');
    await this.temporal(() => this.deps.schedules.pause(id));
    return this.view(pledge);
  }

  async resume(id: string, access: PledgeAccess): Promise<PledgeView> {
    const pledge = await this.move(id, access, 'ACTIVE');
    await this.temporal(() => this.deps.schedules.resume(id));
    return this.view(pledge);
  }

  /** Stops every future period; a period already started is charged or not as it goes. */
  async cancel(id: string, access: PledgeAccess): Promise<PledgeView> {
    const pledge = await this.move(id, access, 'CANCELLED');
    await this.temporal(() => this.deps.schedules.cancel(id));
    return this.view(pledge);
  }

  /** A new amount or method, from the next period on. */
  async change(
    id: string,
    access: PledgeAccess,
    change: { amount?: number | undefined; paymentMethod?: string | undefined },
  ): Promise<PledgeView> {
    await this.find(id, access);
    const pledge = await this.deps.pledges.update(id, change);
    if (!pledge) throw new AppError('pledge-cancelled');
    return this.view(pledge);
  }

  private async startPeriod(
    pledge: Pledge,
    at: Date,
    correlationId: string,
    { waitForAction = true, attempt = 0 }: { waitForAction?: boolean; attempt?: number } = {},
  ): Promise<{ period: string; accepted: DonationAccepted } | undefined> {
    const period = periodOf(pledge.interval, at, pledge.timeZone, this.deps.calendar);
    // The attempt's donation is keyed like a client's request: the same attempt, the same ID.
    const scope: IdempotencyScope = {
      clientId: pledge.clientId,
      method: 'POST',
      route: '/v1/pledges/:id/periods',
      key: attempt === 0 ? `${pledge.id}:${period}` : `${pledge.id}:${period}:${attempt}`,
    };
    // Refused before the period is recorded, so a campaign that closed leaves no period naming
    // a donation that never was (the start checks again, for its own callers).
    await this.deps.donations.assertAcceptable(pledge, pledge.provider);
    // The amount the period was first started with, whatever changed since; none when the
    // pledge stopped being active since it was read (cancelled, paused).
    const recorded = await this.deps.pledges.startPeriod(
      pledge.id,
      period,
      attempt,
      deriveUuid(scope),
      pledge.amount,
    );
    if (!recorded) return undefined;
    const { amount } = recorded;
    const accepted = await this.deps.donations.create(
      scope,
      {
        campaignId: pledge.campaignId,
        amount,
        currency: pledge.currency,
        donor: pledge.donor,
        message: pledge.message ?? undefined,
        paymentMethod: pledge.paymentMethod,
      },
      correlationId,
      {
        waitForAction,
        savedMethod: this.deps.billing.methodUse(pledge),
        provider: pledge.provider,
      },
    );
    return { period, accepted };
  }

  private async move(id: string, access: PledgeAccess, status: Pledge['status']): Promise<Pledge> {
    await this.find(id, access);
    const moved = await this.deps.pledges.setStatus(id, status);
    if (moved) return moved;
    // Already there (a repeated request), or cancelled for good.
    const current = await this.deps.pledges.find(id);
    if (current?.status === status) return current;
    throw new AppError('pledge-cancelled');
  }

  private async find(id: string, access: PledgeAccess): Promise<Pledge> {
    const pledge = await this.deps.pledges.find(id);
    const allowed =
      pledge !== undefined &&
      ('operator' in access ||
        ('client' in access && pledge.clientId === access.client) ||
        ('token' in access && this.deps.links.verifies(id, access.token)));
    if (!pledge || !allowed) throw new AppError('pledge-not-found');
    return pledge;
  }

  private async view(pledge: Pledge): Promise<PledgeView> {
    return pledgeView(
      pledge,
      await this.deps.pledges.periods(pledge.id),
      this.deps.links.manageLink(pledge.id),
    );
  }

  private async temporal(fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (error) {
      throw new AppError('service-unavailable', {
        detail: 'The pledge is saved; its schedule could not be changed now: retry.',
        retryAfter: 2,
        cause: error,
      });
    }
  }
}

/** Today's day of the period in the pledge's time zone: the day a new pledge charges on. */
function dayToday(interval: PledgeInterval, now: Date, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    day: 'numeric',
    weekday: 'short',
  }).formatToParts(now);
  if (interval === 'monthly') return Number(parts.find((part) => part.type === 'day')?.value);
  const weekday = parts.find((part) => part.type === 'weekday')?.value ?? 'Mon';
  return ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].indexOf(weekday) + 1;
}
