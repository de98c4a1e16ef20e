import { parseArgs } from 'node:util';
import { AppError } from '../errors/error-catalogue';
import { deadLettersCommand } from './commands/dead-letters';
import { reconcileCommand } from './commands/reconcile';
import { redeliverCommand } from './commands/redeliver';
import { refundCommand } from './commands/refund';
import { resetCommand } from './commands/reset';
import { showCommand } from './commands/show';
import { ExitCode, OpsFailure, UsageError } from './ops-command';
import type { OpsCommand, ParsedArgs } from './ops-command';
import type { OpsContext, OpsIo } from './ops-context';

export const commands: readonly OpsCommand[] = [
  deadLettersCommand,
  showCommand,
  resetCommand,
  redeliverCommand,
  reconcileCommand,
  refundCommand,
];

export function globalHelp(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return `Usage: npm run ops -- <command> [options]

Operator tools for galang. Configuration comes from the environment, like the API and the
worker (DATABASE_URL, TEMPORAL_ADDRESS, TEMPORAL_TASK_QUEUE, ...).

Commands:
${commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}

Commands that change something (reset, redeliver, reconcile, refund) are dry runs unless
--yes is given. \`npm run ops -- <command> --help\` describes a command.

Exit codes: 0 done, 1 failed (or refused), 2 usage error, 78 invalid configuration.
See docs/operations.md.`;
}

/**
 * Parses the command line, opens the context only when a command will run (help and usage
 * errors need no database), runs it and returns the exit code. Errors become messages on
 * stderr, never stack traces.
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
  } catch (error) {
    io.err(`${(error as Error).message}\n\n${command.help}`);
    return ExitCode.usage;
  }
  try {
    return await command.run(await open(), args, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`${error.message}\n\n${command.help}`);
      return ExitCode.usage;
    }
    if (error instanceof OpsFailure || error instanceof AppError) {
      io.err(`${name}: ${describe(error)}`);
      return ExitCode.failure;
    }
    io.err(`${name} failed: ${error instanceof Error ? error.message : String(error)}`);
    return ExitCode.failure;
  }
}

function describe(error: OpsFailure | AppError): string {
  if (error instanceof AppError) {
    return `${error.code}: ${error.title}${error.detail ? ` (${error.detail})` : ''}`;
  }
  return error.message;
}
