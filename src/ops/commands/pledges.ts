import { pledgeScheduleId } from '../../../workflows/contracts';
import { json, table } from '../format';
import { ExitCode, integerValue, jsonOption, stringValue } from '../ops-command';
import type { OpsCommand } from '../ops-command';

const STATUSES = ['ACTIVE', 'PAUSED', 'CANCELLED'] as const;

export const pledgesCommand: OpsCommand = {
  name: 'pledges',
  summary: 'List pledges (monthly giving) and their last period',
  help: `Usage: npm run ops -- pledges [--status ACTIVE|PAUSED|CANCELLED] [--limit <n>] [--json]

Lists pledges, newest first: their terms, status and schedule (pledge-<id> in the Temporal UI's
Schedules), without donor data. Read-only. See docs/pledges.md.

  --status <status>  only pledges in this status
  --limit <n>        at most n rows (default 50)
  --json             as JSON`,
  options: { status: { type: 'string' }, limit: { type: 'string' }, ...jsonOption },
  validate: (args) => {
    const status = stringValue(args, 'status');
    if (args.positionals.length > 0) return 'pledges takes no arguments';
    if (status !== undefined && !(STATUSES as readonly string[]).includes(status))
      return `--status must be one of ${STATUSES.join(', ')}`;
    return undefined;
  },
  async run(ctx, args, io) {
    const status = stringValue(args, 'status') as (typeof STATUSES)[number] | undefined;
    const pledges = await ctx.pledgeRepository.list(status, integerValue(args, 'limit') ?? 50);
    const rows = pledges.map((pledge) => ({
      id: pledge.id,
      status: pledge.status,
      campaign: pledge.campaignId,
      amount: pledge.amount,
      currency: pledge.currency,
      interval: pledge.interval,
      day: pledge.dayOfPeriod,
      timeZone: pledge.timeZone,
      schedule: pledgeScheduleId(pledge.id),
      createdAt: pledge.createdAt,
    }));
    if (args.values.json === true) io.out(json(rows));
    else if (rows.length === 0) io.out('No pledges.');
    else
      io.out(
        table(rows, [
          'id',
          'status',
          'campaign',
          'amount',
          'currency',
          'interval',
          'day',
          'schedule',
        ]),
      );
    return ExitCode.ok;
  },
};
