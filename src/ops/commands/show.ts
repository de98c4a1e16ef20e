import { WorkflowNotFoundError } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { donationWorkflowId, getStateQuery } from '../../../workflows/contracts';
import type { DonationState } from '../../../workflows/contracts';
import { json } from '../format';
import { ExitCode, OpsFailure, jsonOption } from '../ops-command';
import type { OpsCommand } from '../ops-command';
import type { OpsContext } from '../ops-context';

const EventType = temporal.api.enums.v1.EventType;

/** One line per history event: what happened, when, and to which activity. */
export interface HistoryLine {
  eventId: number;
  type: string;
  time: string | undefined;
  detail?: string;
}

/** The activity a local-activity marker records (the SDK's marker data is JSON). */
function localActivityType(
  marker: temporal.api.history.v1.IMarkerRecordedEventAttributes | null | undefined,
): string | undefined {
  const data = marker?.details?.data?.payloads?.[0]?.data;
  if (!data) return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type?: unknown };
    return typeof parsed.activity_type === 'string' ? parsed.activity_type : undefined;
  } catch {
    return undefined;
  }
}

export async function historySummary(ctx: OpsContext, workflowId: string): Promise<HistoryLine[]> {
  const history = await ctx.temporal.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).map((event) => {
    const type = (EventType[event.eventType ?? 0] ?? 'UNKNOWN').replace(/^EVENT_TYPE_/, '');
    const seconds = Number(event.eventTime?.seconds ?? 0);
    const detail =
      event.activityTaskScheduledEventAttributes?.activityType?.name ??
      localActivityType(event.markerRecordedEventAttributes) ??
      event.workflowExecutionSignaledEventAttributes?.signalName ??
      event.activityTaskFailedEventAttributes?.failure?.message ??
      event.workflowExecutionTerminatedEventAttributes?.reason ??
      undefined;
    return {
      eventId: Number(event.eventId),
      type,
      time: seconds ? new Date(seconds * 1000).toISOString() : undefined,
      ...(detail ? { detail } : {}),
    };
  });
}

export const showCommand: OpsCommand = {
  name: 'show',
  summary: 'Show a donation: its row, its workflow, a history summary and its live state',
  help: `Usage: npm run ops -- show <donationId> [--json]

Prints the donation as Postgres has it, its workflow's description, one line per history event
(type, time, activity or signal), and the workflow's getState answer while it runs. Read-only;
recorded in the audit log, as it shows the donor's data.
Exit code 1 when no such donation exists.`,
  options: { ...jsonOption },
  validate: (args) => (args.positionals.length === 1 ? undefined : 'show takes one <donationId>'),
  // It prints the donor's data (the row, the live state): a read worth recording.
  audit: (args) => {
    const id = args.positionals[0] ?? '';
    return { action: 'show', donationId: id, workflowId: donationWorkflowId(id) };
  },
  async run(ctx, args, io) {
    const id = args.positionals[0] ?? '';
    const donation = await ctx.donations.findById(id);
    if (!donation) throw new OpsFailure(`No donation ${id}`);
    const handle = ctx.temporal.workflow.getHandle(donation.workflowId);
    let workflow: Record<string, unknown> | undefined;
    let history: HistoryLine[] = [];
    let state: DonationState | undefined;
    try {
      const description = await handle.describe();
      workflow = {
        workflowId: description.workflowId,
        runId: description.runId,
        status: description.status.name,
        taskQueue: description.taskQueue,
        startedAt: description.startTime,
        closedAt: description.closeTime,
        memo: description.memo,
      };
      history = await historySummary(ctx, donation.workflowId);
      if (description.status.name === 'RUNNING') {
        state = await handle.query(getStateQuery);
      }
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
    }
    if (args.values.json === true) {
      io.out(json({ donation, workflow, history, state }));
      return ExitCode.ok;
    }
    io.out(`Donation\n${json(donation)}\n`);
    io.out(
      workflow
        ? `Workflow\n${json(workflow)}\n`
        : 'Workflow: not found (never started, or past retention)\n',
    );
    if (history.length > 0) {
      io.out('History');
      for (const line of history) {
        io.out(
          `  ${String(line.eventId).padStart(4)}  ${line.time ?? ''}  ${line.type}${line.detail ? `  ${line.detail}` : ''}`,
        );
      }
    }
    if (state) io.out(`\nLive state (getState)\n${json(state)}`);
    return ExitCode.ok;
  },
};
