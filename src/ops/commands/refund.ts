import { createHash } from 'node:crypto';
import { refundRequestWorkflowId } from '../../../workflows/contracts';
import { json } from '../format';
import { DRY_RUN_NOTE, ExitCode, integerValue, stringValue, yesOption } from '../ops-command';
import type { OpsCommand, ParsedArgs } from '../ops-command';

/** The request's key: `--key`, or derived from the amount and the reason (one refund per ask). */
function requestKey(args: ParsedArgs): string {
  return (
    stringValue(args, 'key') ??
    `ops-${createHash('sha256')
      .update(`${integerValue(args, 'amount') ?? 'all'}|${stringValue(args, 'reason') ?? ''}`)
      .digest('hex')
      .slice(0, 16)}`
  );
}

export const refundCommand: OpsCommand = {
  name: 'refund',
  summary: 'Refund a confirmed donation, fully or in part (dry run unless --yes)',
  help: `Usage: npm run ops -- refund <donationId> [--amount <n>] --reason <text> [--yes]

The operator refund of POST /v1/donations/:id/refunds, through the same service: starts a
refund-request workflow (refund-request-<donationId>-<key>), which asks the provider once
under a key derived from both (<donationId>-refund-<digest of key>) and hands the refund to its reversal workflow; the ledger
moves when the provider reports the refund succeeded. The same command run twice refunds once.

  --amount <n>     minor units; default the whole donation (capped at it)
  --reason <text>  required; kept with the refund at the provider
  --key <key>      the request's key; default derived from the amount and the reason
  --yes, -y        do it; without it, print what would happen and change nothing`,
  options: {
    amount: { type: 'string' },
    reason: { type: 'string' },
    key: { type: 'string' },
    ...yesOption,
  },
  validate: (args) =>
    args.positionals.length !== 1
      ? 'refund takes one <donationId>'
      : stringValue(args, 'reason') === undefined
        ? 'refund needs --reason <text>'
        : undefined,
  // The reason is free text and stays out of the audit log; the provider keeps it.
  audit: (args) => {
    if (args.values.yes !== true) return undefined;
    const id = args.positionals[0] ?? '';
    return {
      action: 'refund',
      donationId: id,
      workflowId: refundRequestWorkflowId(id, requestKey(args)),
      detail: { amount: integerValue(args, 'amount') ?? 'all' },
    };
  },
  async run(ctx, args, io) {
    const id = args.positionals[0] ?? '';
    const amount = integerValue(args, 'amount');
    const reason = stringValue(args, 'reason') ?? '';
    const key = requestKey(args);
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(key)) {
      io.err('--key takes 1 to 64 letters, digits, - or _');
      return ExitCode.usage;
    }
    const plan = await ctx.donationService.planRefund(id, amount, reason, key);
    const summary = {
      donationId: id,
      donationStatus: plan.donation.status,
      donationAmount: plan.donation.amount,
      currency: plan.donation.currency,
      refundAmount: plan.refund.amount,
      reason,
      provider: plan.donation.provider,
      workflowId: plan.workflowId,
    };
    if (args.values.yes !== true) {
      io.out(`Would refund:\n${json(summary)}\n${DRY_RUN_NOTE}`);
      return ExitCode.ok;
    }
    const accepted = await ctx.donationService.requestRefund(id, amount, reason, key);
    io.out(`Refund requested:\n${json(accepted)}`);
    return ExitCode.ok;
  },
};
