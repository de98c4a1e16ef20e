import { randomUUID } from 'node:crypto';
import { donationWorkflowId } from '../../../workflows/contracts';
import { json } from '../format';
import { DRY_RUN_NOTE, ExitCode, OpsFailure, stringValue, yesOption } from '../ops-command';
import type { OpsCommand, ParsedArgs } from '../ops-command';
import { historySummary } from './show';
import type { HistoryLine } from './show';

/** Event types a reset may point at: the end of a workflow task. */
const RESET_POINTS = new Set([
  'WORKFLOW_TASK_COMPLETED',
  'WORKFLOW_TASK_FAILED',
  'WORKFLOW_TASK_TIMED_OUT',
]);

function target(args: ParsedArgs): string | undefined {
  const to = stringValue(args, 'to');
  if (to === 'first-task' || to === 'last-task') {
    return args.positionals.length === 1 ? undefined : `reset takes one <donationId>`;
  }
  if (to === 'event-id') {
    return args.positionals.length === 2 && /^\d+$/.test(args.positionals[1] ?? '')
      ? undefined
      : '--to event-id needs the event id: reset <donationId> --to event-id <n>';
  }
  return '--to must be first-task, last-task or event-id <n>';
}

function resetPoint(history: HistoryLine[], args: ParsedArgs): HistoryLine {
  const tasks = history.filter((line) => line.type === 'WORKFLOW_TASK_COMPLETED');
  const to = stringValue(args, 'to');
  const point =
    to === 'first-task'
      ? tasks[0]
      : to === 'last-task'
        ? tasks.at(-1)
        : history.find((line) => line.eventId === Number(args.positionals[1]));
  if (!point) throw new OpsFailure('The history has no such reset point');
  if (!RESET_POINTS.has(point.type)) {
    throw new OpsFailure(
      `Event ${point.eventId} is ${point.type}; a reset point must end a workflow task (${[...RESET_POINTS].join(', ')})`,
    );
  }
  return point;
}

export const resetCommand: OpsCommand = {
  name: 'reset',
  summary: "Reset a donation's workflow to an earlier workflow task (dry run unless --yes)",
  help: `Usage: npm run ops -- reset <donationId> --to <first-task|last-task|event-id <n>> [--reason <text>] [--yes]

Resets the donation's latest workflow run to the end of a workflow task: a new run replays the
history up to that point and runs everything after it again. Safe because every activity is
keyed by the donation (docs/operations.md, "Resetting a workflow safely").

  --to first-task    the first completed workflow task (the whole donation runs again)
  --to last-task     the last completed workflow task
  --to event-id <n>  event n, which must be a WORKFLOW_TASK_COMPLETED (see: ops show)
  --reason <text>    recorded in the workflow history (default "ops reset")
  --yes, -y          do it; without it, print what would happen and change nothing`,
  options: { to: { type: 'string' }, reason: { type: 'string' }, ...yesOption },
  validate: target,
  audit: (args) => {
    if (args.values.yes !== true) return undefined;
    const id = args.positionals[0] ?? '';
    const eventId = args.positionals[1];
    return {
      action: 'reset',
      donationId: id,
      workflowId: donationWorkflowId(id),
      detail: {
        to: stringValue(args, 'to') ?? null,
        ...(eventId === undefined ? {} : { eventId: Number(eventId) }),
      },
    };
  },
  async run(ctx, args, io) {
    const id = args.positionals[0] ?? '';
    const donation = await ctx.donations.findById(id);
    if (!donation) throw new OpsFailure(`No donation ${id}`);
    const handle = ctx.temporal.workflow.getHandle(donation.workflowId);
    const description = await handle.describe();
    const history = await historySummary(ctx, donation.workflowId);
    const point = resetPoint(history, args);
    const rerun = history
      .filter(
        (line) =>
          line.eventId > point.eventId &&
          (line.type === 'ACTIVITY_TASK_SCHEDULED' || line.type === 'MARKER_RECORDED') &&
          line.detail !== undefined,
      )
      .map((line) => line.detail);
    const plan = {
      workflowId: donation.workflowId,
      runId: description.runId,
      status: description.status.name,
      resetTo: point,
      activitiesRunAgain: rerun,
      donationStatus: donation.status,
    };
    if (args.values.yes !== true) {
      io.out(`Would reset:\n${json(plan)}\n${DRY_RUN_NOTE}`);
      return ExitCode.ok;
    }
    // The raw event id (a protobuf Long), as the server wants it back.
    const raw = await handle.fetchHistory();
    const eventId = raw.events?.find((e) => Number(e.eventId) === point.eventId)?.eventId;
    if (!eventId) throw new OpsFailure(`Event ${point.eventId} vanished from the history`);
    const { runId } = await ctx.temporal.workflowService.resetWorkflowExecution({
      namespace: ctx.config.temporal.namespace,
      workflowExecution: { workflowId: donation.workflowId, runId: description.runId },
      reason: stringValue(args, 'reason') ?? 'ops reset',
      workflowTaskFinishEventId: eventId,
      requestId: randomUUID(),
    });
    io.out(`Reset:\n${json({ ...plan, newRunId: runId })}`);
    return ExitCode.ok;
  },
};
