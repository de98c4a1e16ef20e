import { json, table } from '../format';
import {
  DRY_RUN_NOTE,
  ExitCode,
  integerValue,
  jsonOption,
  stringValue,
  yesOption,
} from '../ops-command';
import type { OpsCommand } from '../ops-command';

export const mailCommand: OpsCommand = {
  name: 'mail',
  summary: 'List receipt e-mails not sent; resend one (dry run unless --yes)',
  help: `Usage: npm run ops -- mail [--limit <n>] [--json]
       npm run ops -- mail --resend <number> [--yes]

Lists receipt and credit-note e-mails whose delivery did not end sent: "sending" (being tried,
or a crash mid-send) and "failed" (every attempt used, or refused for good by the SMTP server),
oldest first, with the attempts and the last error. Read-only.
With --resend: queues that document's mail again (after fixing SMTP, say); the next receipts
run sends it. A document already sent is not sent again.

  --limit <n>         at most n rows (default 50)
  --resend <number>   the document to send again
  --yes, -y           do it; without it, say what would be done
  --json              the list as JSON`,
  options: { limit: { type: 'string' }, resend: { type: 'string' }, ...yesOption, ...jsonOption },
  validate: (args) => (args.positionals.length === 0 ? undefined : 'mail takes no arguments'),
  audit: (args) => {
    const number = stringValue(args, 'resend');
    return number !== undefined && args.values.yes === true
      ? { action: 'mail-resend', detail: { number } }
      : undefined;
  },
  async run(ctx, args, io) {
    const number = stringValue(args, 'resend');
    if (number !== undefined) {
      if (args.values.yes !== true) {
        io.out(`Would queue the mail of ${number} again.`);
        io.out(DRY_RUN_NOTE);
        return ExitCode.ok;
      }
      if (!(await ctx.receipts.find(number))) {
        io.err(`No receipt ${number}.`);
        return ExitCode.failure;
      }
      const queued = await ctx.mailDeliveries.requeue(number);
      io.out(
        queued
          ? `Queued the mail of ${number}; the next receipts run sends it.`
          : `The mail of ${number} is queued already.`,
      );
      return ExitCode.ok;
    }
    const rows = await ctx.mailDeliveries.unsent(integerValue(args, 'limit') ?? 50);
    if (args.values.json === true) {
      io.out(json(rows));
      return ExitCode.ok;
    }
    io.out(
      rows.length === 0
        ? 'Every receipt e-mail was sent.'
        : table(rows, ['receipt_number', 'status', 'attempts', 'updated_at', 'last_error']),
    );
    return ExitCode.ok;
  },
};
