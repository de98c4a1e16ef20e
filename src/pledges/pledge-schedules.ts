import {
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  WorkflowExecutionAlreadyStartedError,
} from '@temporalio/client';
import type { Client } from '@temporalio/client';
import {
  CampaignIdAttribute,
  ProviderAttribute,
  WorkflowType,
  pledgeFirstPeriodWorkflowId,
  pledgePeriodWorkflowId,
  pledgeScheduleId,
} from '../../workflows/contracts';
import type { PledgePeriodWorkflow } from '../../workflows/contracts';
import { CHARGE_JITTER, pledgeCalendars } from './pledge-calendar';
import type { PledgeCalendar } from './pledge-calendar';
import type { Pledge } from './pledge-repository';

/**
 * Each pledge's one Temporal Schedule (`pledge-<id>`): every action starts the pledge's period
 * workflow, which charges the period the action's nominal time falls in. Overlaps are allowed
 * (two actions of one period start one donation per attempt: its ID derives from pledge, period
 * and attempt); a
 * period missed while Temporal was down is caught up within three days, after which it is left
 * uncharged rather than charged late. Postgres holds the pledge's status; the schedule follows
 * it, and a period's action checks the row again, so a schedule the API could not pause charges
 * nothing.
 */
export class PledgeSchedules {
  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
    private readonly calendar: PledgeCalendar,
  ) {}

  /** Creates the pledge's schedule; one that exists (a retried request) is left as it is. */
  async ensure(pledge: Pledge): Promise<void> {
    try {
      await this.client.schedule.create({
        scheduleId: pledgeScheduleId(pledge.id),
        spec: {
          calendars: pledgeCalendars(pledge.interval, pledge.dayOfPeriod, this.calendar),
          timezone: pledge.timeZone,
          ...(this.calendar.kind === 'real' && { jitter: CHARGE_JITTER }),
        },
        action: {
          type: 'startWorkflow',
          workflowType: WorkflowType.pledgePeriod,
          workflowId: pledgePeriodWorkflowId(pledge.id),
          taskQueue: this.taskQueue,
          args: [{ pledgeId: pledge.id }] as Parameters<PledgePeriodWorkflow>,
          typedSearchAttributes: [
            { key: CampaignIdAttribute, value: pledge.campaignId },
            { key: ProviderAttribute, value: pledge.provider },
          ],
        },
        policies: { overlap: 'ALLOW_ALL', catchupWindow: '3 days' },
        state: { paused: pledge.status === 'PAUSED', note: `pledge ${pledge.status}` },
        typedSearchAttributes: [{ key: CampaignIdAttribute, value: pledge.campaignId }],
      });
    } catch (error) {
      if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    }
  }

  async pause(pledgeId: string): Promise<void> {
    await this.ifExists(pledgeId, (handle) => handle.pause('pledge paused'));
  }

  async resume(pledgeId: string): Promise<void> {
    await this.ifExists(pledgeId, (handle) => handle.unpause('pledge resumed'));
  }

  /** Stops every future period; a period already started goes on to its end. */
  async cancel(pledgeId: string): Promise<void> {
    await this.ifExists(pledgeId, (handle) => handle.delete());
  }

  /**
   * Starts the period workflow of the first period, which the pledge's creation charged: it
   * waits for that donation, keeps its method, and runs the dunning if it fails. Once.
   */
  async followFirstPeriod(pledge: Pledge): Promise<void> {
    try {
      await this.client.workflow.start<PledgePeriodWorkflow>(WorkflowType.pledgePeriod, {
        workflowId: pledgeFirstPeriodWorkflowId(pledge.id),
        taskQueue: this.taskQueue,
        args: [{ pledgeId: pledge.id, at: pledge.createdAt.toISOString(), first: true }],
        typedSearchAttributes: [
          { key: CampaignIdAttribute, value: pledge.campaignId },
          { key: ProviderAttribute, value: pledge.provider },
        ],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      });
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
  }

  /** Runs an action now: it charges the current period, unless that period was charged. */
  async trigger(pledgeId: string): Promise<void> {
    await this.client.schedule.getHandle(pledgeScheduleId(pledgeId)).trigger('ALLOW_ALL');
  }

  private async ifExists(
    pledgeId: string,
    act: (handle: ReturnType<Client['schedule']['getHandle']>) => Promise<void>,
  ): Promise<void> {
    try {
      await act(this.client.schedule.getHandle(pledgeScheduleId(pledgeId)));
    } catch (error) {
      if (!(error instanceof ScheduleNotFoundError)) throw error;
    }
  }
}
