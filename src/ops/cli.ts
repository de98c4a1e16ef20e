import { parseArgs } from 'node:util';
import { AppError } from '../errors/error-catalogue';
import { auditCommand } from './commands/audit';
import { deadLettersCommand } from './commands/dead-letters';
import { eraseCommand } from './commands/erase';
import { pledgesCommand } from './commands/pledges';
import { mailCommand } from './commands/mail';
import { reconcileCommand } from './commands/reconcile';
import { redeliverCommand } from './commands/redeliver';
import { refundCommand } from './commands/refund';
import { resetCommand } from './commands/reset';
import { showCommand } from './commands/show';
import { ExitCode, OpsFailure, UsageError } from './ops-command';
import type { OpsAudit, OpsCommand, ParsedArgs } from './ops-command';
import type { OpsContext, OpsIo } from './ops-context';

export const commands: readonly OpsCommand[] = [
  deadLettersCommand,
  showCommand,
  resetCommand,
  redeliverCommand,
  reconcileCommand,
  refundCommand,
  auditCommand,
  mailCommand,
  eraseCommand,
  pledgesCommand,
];

export function globalHelp(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return `Usage: npm run ops -- <command> [options]

Operator tools for galang. Configuration comes from the environment, like the API and the
worker (DATABASE_URL, TEMPORAL_ADDRESS, TEMPORAL_TASK_QUEUE, ...).

Commands:
${commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}

Commands that change something (reset, redeliver, reconcile, refund, mail --resend, erase) are dry runs unless
--yes is given; run with --yes, and show, each record one row in the audit log first (the
command does not run when it cannot be written). \`npm run ops -- <command> --help\`
describes a command.

Exit codes: 0 done, 1 failed (or refused), 2 usage error, 78 invalid configuration.
See docs/operations.md.`;
}

/**
 * Parses the command line, opens the context only when a command will run (help and usage
 * errors need no database), records the run in the audit log when the command says it is an
 * operator action (before it runs: it does not run unrecorded), runs it, records its exit code
 * and returns it. Errors become messages on stderr, never stack traces.
 */
export async function runOps(
  argv: readonly string[],
  io: OpsIo,
  open: () => Promise<OpsContext>,
): Promise<ExitCode> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    if (name !== undefined) {
      io.out(globalHelp());
      return ExitCode.ok;
    }
    io.err(globalHelp());
    return ExitCode.usage;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    io.err(`Unknown command "${name}".\n\n${globalHelp()}`);
    return ExitCode.usage;
  }
  let args: ParsedArgs;
  let audited: OpsAudit | undefined;
  try {
    const parsed = parseArgs({
      args: [...rest],
      options: { ...command.options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
    if (parsed.values.help === true) {
      io.out(command.help);
      return ExitCode.ok;
    }
    args = { positionals: parsed.positionals, values: parsed.values };
    const problem = command.validate?.(args);
    if (problem) throw new UsageError(problem);
    audited = command.audit?.(args);
  } catch (error) {
    io.err(`${(error as Error).message}\n\n${command.help}`);
    return ExitCode.usage;
  }
  let ctx: OpsContext | undefined;
  let auditId: number | undefined;
  let code: ExitCode;
  let failure: string | undefined;
  try {
    ctx = await open();
    if (audited) auditId = await recordRun(ctx, audited);
    code = await command.run(ctx, args, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`${error.message}\n\n${command.help}`);
      failure = error.message;
      code = ExitCode.usage;
    } else if (error instanceof OpsFailure || error instanceof AppError) {
      failure = describe(error);
      io.err(`${name}: ${failure}`);
      code = ExitCode.failure;
    } else {
      failure = messageOf(error);
      io.err(`${name} failed: ${failure}`);
      code = ExitCode.failure;
    }
  }
  if (ctx && auditId !== undefined) {
    await ctx.audit
      .settle(auditId, {
        outcome: code === ExitCode.ok ? 'succeeded' : 'failed',
        status: code,
        error: failure,
      })
      .catch((error: unknown) => {
        io.err(`${name}: its outcome was not recorded in the audit log (${messageOf(error)})`);
      });
  }
  return code;
}

/** The run's audit row, before it starts; unwritable, the command is not run. */
async function recordRun(ctx: OpsContext, audited: OpsAudit): Promise<number> {
  try {
    return await ctx.audit.record({
      ...audited,
      actor: { kind: 'cli', id: ctx.actor.id },
      origin: 'cli',
      address: ctx.actor.host,
    });
  } catch (error) {
    throw new OpsFailure(`not done: the audit log cannot be written (${messageOf(error)})`);
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function describe(error: OpsFailure | AppError): string {
  if (error instanceof AppError) {
    return `${error.code}: ${error.title}${error.detail ? ` (${error.detail})` : ''}`;
  }
  return error.message;
}
