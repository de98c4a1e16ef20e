import { runReconciliationNow } from '../../reconciliation/reconciliation-schedule';
import { json, table } from '../format';
import { DRY_RUN_NOTE, ExitCode, jsonOption, yesOption } from '../ops-command';
import type { OpsCommand } from '../ops-command';

export const reconcileCommand: OpsCommand = {
  name: 'reconcile',
  summary: 'Run reconciliation now and print its report (dry run unless --yes)',
  help: `Usage: npm run ops -- reconcile [--yes] [--json]

Without --yes: computes what a reconciliation run would do (campaign totals that differ from
their ledger, stuck donations it would hand back, undelivered webhooks, raw webhook bodies past
their retention) and changes nothing.
With --yes: triggers the worker's reconciliation schedule (or starts the workflow when there is
no schedule), waits for the run and prints its report; the run also reads the provider's record
of every payment whose money can still move (providerSweep: checked, followed, failed) and
posts what the ledger lacks, and releases at their provider the cards pledges let go of
(keptMethods: released, failed, leftForOperator). Needs a running worker.

  --yes, -y  run it
  --json     print the plan or the report as JSON`,
  options: { ...yesOption, ...jsonOption },
  validate: (args) => (args.positionals.length === 0 ? undefined : 'reconcile takes no arguments'),
  audit: (args) => (args.values.yes === true ? { action: 'reconcile' } : undefined),
  async run(ctx, args, io) {
    if (args.values.yes === true) {
      const report = await runReconciliationNow(ctx.temporal, ctx.config.temporal.taskQueue);
      io.out(args.values.json === true ? json(report) : `Reconciliation report:\n${json(report)}`);
      return ExitCode.ok;
    }
    const plan = await ctx.reconciler.plan();
    if (args.values.json === true) {
      io.out(json(plan));
      return ExitCode.ok;
    }
    io.out(`Campaigns checked: ${plan.campaignsChecked}`);
    const drift = plan.drift.map((d) => ({
      campaignId: d.campaignId,
      storedAmount: d.stored.amount,
      ledgerAmount: d.ledger.amount,
      storedCount: d.stored.count,
      ledgerCount: d.ledger.count,
      version: d.stored.version,
    }));
    io.out(
      drift.length === 0
        ? 'Totals: all equal their ledger.'
        : `Totals that would be set to their ledger:\n${table(drift, ['campaignId', 'storedAmount', 'ledgerAmount', 'storedCount', 'ledgerCount', 'version'])}`,
    );
    const stuck = plan.stuck;
    io.out(
      stuck.length === 0
        ? 'Stuck donations: none.'
        : `Overdue open donations:\n${table(stuck, ['donationId', 'status', 'workflow', 'action', 'reason'])}`,
    );
    io.out(
      plan.inbox.length === 0
        ? 'Inbox: nothing undelivered.'
        : `Webhooks that would be delivered again: ${plan.inbox.map((e) => e.id).join(', ')}`,
    );
    io.out(`Webhook bodies past retention (payer data a run purges): ${plan.bodiesToPurge}`);
    io.out(
      `Donor details of starts that never happened (a run deletes): ${plan.donorDetailsToPurge}`,
    );
    io.out(DRY_RUN_NOTE);
    return ExitCode.ok;
  },
};
