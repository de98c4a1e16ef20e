import {
  CampaignIdAttribute,
  DonationStatusAttribute,
  donationIdOfWorkflow,
  WorkflowType,
} from '../../../workflows/contracts';
import { json, table } from '../format';
import { ExitCode, integerValue, jsonOption, stringValue } from '../ops-command';
import type { OpsCommand } from '../ops-command';

/** Closed without deciding (failed, terminated, timed out), or decided as needing review. */
export function deadLetterQuery(taskQueue: string, campaignId?: string): string {
  const quote = (value: string) => `'${value.replace(/'/g, "''")}'`;
  return [
    `WorkflowType = ${quote(WorkflowType.donation)}`,
    `TaskQueue = ${quote(taskQueue)}`,
    `(ExecutionStatus = 'Failed' OR ExecutionStatus = 'Terminated' OR ExecutionStatus = 'TimedOut' OR DonationStatus = 'NEEDS_REVIEW')`,
    ...(campaignId === undefined ? [] : [`CampaignId = ${quote(campaignId)}`]),
  ].join(' AND ');
}

export const deadLettersCommand: OpsCommand = {
  name: 'dead-letters',
  summary: 'List donation workflows that failed, were terminated, timed out or need review',
  help: `Usage: npm run ops -- dead-letters [--campaign <id>] [--limit <n>] [--json]

Lists donation workflows on this task queue (TEMPORAL_TASK_QUEUE) that closed Failed,
Terminated or TimedOut, or whose DonationStatus is NEEDS_REVIEW, newest first. Read-only.

  --campaign <id>  only this campaign's donations
  --limit <n>      at most n rows (default 50)
  --json           one JSON array instead of a table`,
  options: { campaign: { type: 'string' }, limit: { type: 'string' }, ...jsonOption },
  async run(ctx, args, io) {
    const limit = integerValue(args, 'limit') ?? 50;
    const query = deadLetterQuery(ctx.config.temporal.taskQueue, stringValue(args, 'campaign'));
    const rows = [];
    for await (const execution of ctx.temporal.workflow.list({ query, pageSize: limit })) {
      rows.push({
        donationId: donationIdOfWorkflow(execution.workflowId),
        workflowId: execution.workflowId,
        runId: execution.runId,
        execution: execution.status.name,
        donationStatus: execution.typedSearchAttributes.get(DonationStatusAttribute),
        campaignId: execution.typedSearchAttributes.get(CampaignIdAttribute),
        closedAt: execution.closeTime,
      });
      if (rows.length >= limit) break;
    }
    if (args.values.json === true) {
      io.out(json(rows));
    } else if (rows.length === 0) {
      io.out('No dead letters.');
    } else {
      io.out(table(rows, ['donationId', 'execution', 'donationStatus', 'campaignId', 'closedAt']));
      io.out(`\nInspect one with: npm run ops -- show <donationId>`);
    }
    return ExitCode.ok;
  },
};
