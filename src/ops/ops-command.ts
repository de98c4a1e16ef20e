import type { ParseArgsConfig } from 'node:util';
import type { AuditAction, AuditSubject } from '../audit/audit-entry';
import type { OpsContext, OpsIo } from './ops-context';

/** Exit codes of `npm run ops`; docs/operations.md lists them for operators. */
export const ExitCode = { ok: 0, failure: 1, usage: 2 } as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** A command's parsed arguments: positionals, then option values by name. */
export interface ParsedArgs {
  positionals: string[];
  values: Record<string, string | boolean | undefined>;
}

export interface OpsCommand {
  name: string;
  summary: string;
  /** The usage line and the options, for `<command> --help`. */
  help: string;
  options: NonNullable<ParseArgsConfig['options']>;
  /** Checks what parsing cannot (positionals, formats); a message is a usage error. */
  validate?(args: ParsedArgs): string | undefined;
  /**
   * What this run records in the audit log before it starts (src/ops/cli.ts), or undefined for
   * a run that changes nothing and shows no donor data (a dry run, a listing).
   */
  audit?(args: ParsedArgs): OpsAudit | undefined;
  run(ctx: OpsContext, args: ParsedArgs, io: OpsIo): Promise<ExitCode>;
}

/** A command's audit row: the action and on what. */
export interface OpsAudit extends AuditSubject {
  action: AuditAction;
}

/** A refusal to report as exit code 1 with its message, without a stack trace. */
export class OpsFailure extends Error {}

/** The `--yes` option every command that changes something takes. */
export const yesOption = { yes: { type: 'boolean', short: 'y' } } as const;

export const jsonOption = { json: { type: 'boolean' } } as const;

export const DRY_RUN_NOTE = 'Dry run: nothing was changed. Add --yes to do it.';

export function stringValue(args: ParsedArgs, name: string): string | undefined {
  const value = args.values[name];
  return typeof value === 'string' ? value : undefined;
}

/** A positive integer option, or undefined when absent; a malformed one is a usage error. */
export function integerValue(args: ParsedArgs, name: string): number | undefined {
  const raw = stringValue(args, name);
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < 1)
    throw new UsageError(`--${name} must be a positive integer`);
  return Number(raw);
}

export class UsageError extends Error {}
