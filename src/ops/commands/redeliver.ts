import type { DeliveryOutcome } from '../../webhooks/webhook-delivery';
import { json, table } from '../format';
import { DRY_RUN_NOTE, ExitCode, integerValue, yesOption } from '../ops-command';
import type { OpsCommand } from '../ops-command';

export const redeliverCommand: OpsCommand = {
  name: 'redeliver',
  summary: 'Deliver webhook inbox rows that were never delivered (dry run unless --yes)',
  help: `Usage: npm run ops -- redeliver [--older-than <seconds>] [--limit <n>] [--yes]

Finds webhook_inbox rows not yet delivered to their donation's workflow and delivers them with
the API's own delivery code. Delivering an event twice is harmless: the workflow ignores a
repeated event.

  --older-than <s>  only rows received at least s seconds ago (default 60)
  --limit <n>       at most n rows (default 100)
  --yes, -y         do it; without it, print the rows and change nothing

Exit code 1 when a row could not be delivered (Temporal unreachable): it stays in the inbox.`,
  options: { 'older-than': { type: 'string' }, limit: { type: 'string' }, ...yesOption },
  validate: (args) => (args.positionals.length === 0 ? undefined : 'redeliver takes no arguments'),
  audit: (args) =>
    args.values.yes === true
      ? {
          action: 'redeliver',
          detail: {
            olderThanSeconds: integerValue(args, 'older-than') ?? 60,
            limit: integerValue(args, 'limit') ?? 100,
          },
        }
      : undefined,
  async run(ctx, args, io) {
    const olderThanMs = (integerValue(args, 'older-than') ?? 60) * 1000;
    const limit = integerValue(args, 'limit') ?? 100;
    const pending = await ctx.delivery.pending(limit, { olderThanMs });
    const rows = pending.map((entry) => ({
      inboxId: entry.id,
      provider: entry.provider,
      eventKey: entry.eventKey,
      donationId: entry.donationId,
      status:
        entry.event.kind === 'ignored' || entry.event.kind === 'hint'
          ? entry.event.kind
          : `${entry.event.kind}:${entry.event.status}`,
    }));
    if (args.values.yes !== true) {
      io.out(
        rows.length === 0
          ? 'Nothing to redeliver.'
          : `Would redeliver ${rows.length} row(s):\n${table(rows, ['inboxId', 'provider', 'eventKey', 'donationId', 'status'])}`,
      );
      io.out(DRY_RUN_NOTE);
      return ExitCode.ok;
    }
    const log = {
      warn: (details: object, message: string) => {
        io.err(`${message} ${json(details)}`);
      },
    };
    const outcomes: Record<DeliveryOutcome, number> = {
      delivered: 0,
      'unknown-donation': 0,
      mismatched: 0,
      ignored: 0,
      deferred: 0,
    };
    for (const entry of pending) outcomes[await ctx.delivery.deliver(entry, log)]++;
    io.out(
      `Delivered ${outcomes.delivered} of ${rows.length} row(s); ` +
        `${outcomes['unknown-donation']} about no known donation, ` +
        `${outcomes.mismatched} about another payment, ${outcomes.ignored} of no use (closed); ` +
        `${outcomes.deferred} deferred (Temporal unreachable).`,
    );
    return outcomes.deferred === 0 ? ExitCode.ok : ExitCode.failure;
  },
};
