import { donationWorkflowId } from '../../../workflows/contracts';
import { AUDIT_ACTIONS } from '../../audit/audit-entry';
import type { AuditRecord } from '../../audit/audit-entry';
import { json, table } from '../format';
import { ExitCode, integerValue, jsonOption, stringValue, UsageError } from '../ops-command';
import type { OpsCommand, ParsedArgs } from '../ops-command';

const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `--since`: an ISO 8601 time, or a span back from now (`90m`, `24h`, `7d`). */
export function parseSince(raw: string, now = Date.now()): Date | undefined {
  const span = /^(\d{1,6})([mhd])$/.exec(raw);
  if (span) return new Date(now - Number(span[1]) * UNIT_MS[span[2] as keyof typeof UNIT_MS]);
  if (!/^\d{4}-\d{2}-\d{2}/.test(raw)) return undefined;
  const at = Date.parse(raw);
  return Number.isNaN(at) ? undefined : new Date(at);
}

function since(args: ParsedArgs): Date | undefined {
  const raw = stringValue(args, 'since');
  if (raw === undefined) return undefined;
  const at = parseSince(raw);
  if (!at) throw new UsageError('--since takes an ISO 8601 time or a span: 90m, 24h, 7d');
  return at;
}

/** On what, in one cell: the ids, the payload count and the detail, as `name=value`. */
function subjectOf(entry: AuditRecord): string {
  const parts = [
    entry.donationId && `donation=${entry.donationId}`,
    entry.workflowId &&
      entry.workflowId !== donationWorkflowId(entry.donationId ?? '') &&
      `workflow=${entry.workflowId}`,
    entry.campaignId && `campaign=${entry.campaignId}`,
    entry.payloadCount !== undefined && `payloads=${entry.payloadCount}`,
    ...Object.entries(entry.detail ?? {}).map(([name, value]) => `${name}=${String(value)}`),
  ];
  return parts.filter(Boolean).join(' ') || '-';
}

function row(entry: AuditRecord) {
  const outcome = entry.outcome;
  return {
    id: String(entry.id),
    at: entry.at,
    actor: `${entry.actor.kind}:${entry.actor.id}`,
    action: entry.action,
    on: subjectOf(entry),
    from: [entry.origin, entry.requestId, entry.address].filter(Boolean).join(' '),
    outcome: outcome
      ? [outcome.outcome, outcome.status, outcome.error].filter((v) => v !== undefined).join(' ')
      : 'unknown',
  };
}

export const auditCommand: OpsCommand = {
  name: 'audit',
  summary: 'List the audit log: who did what as an operator, on what, when, from where',
  help: `Usage: npm run ops -- audit [--since <time>] [--actor <id>] [--action <name>] [--limit <n>] [--before <id>] [--json]

Lists the audit log newest first: every operator action over HTTP (by the key id that
authenticated) and every ops command that changed something or showed a donation (by
OPS_ACTOR or the OS user). "outcome" is how it ended (HTTP status or exit code, and the problem
code); "unknown" when the process stopped before it could say. Read-only.

  --since <time>   only entries at or after an ISO 8601 time, or a span back: 90m, 24h, 7d
  --actor <id>     only this key id or CLI user
  --action <name>  only this action: ${AUDIT_ACTIONS.join(', ')}
  --limit <n>      at most n rows (default 50)
  --before <id>    the page after the one that ended at this id (printed under each full page)
  --json           {"entries": [...], "before": <id of the next page, or null>}`,
  options: {
    since: { type: 'string' },
    actor: { type: 'string' },
    action: { type: 'string' },
    limit: { type: 'string' },
    before: { type: 'string' },
    ...jsonOption,
  },
  validate: (args) => {
    if (args.positionals.length > 0) return 'audit takes no arguments';
    const action = stringValue(args, 'action');
    if (action !== undefined && !(AUDIT_ACTIONS as readonly string[]).includes(action)) {
      return `--action must be one of ${AUDIT_ACTIONS.join(', ')}`;
    }
    since(args);
    integerValue(args, 'limit');
    integerValue(args, 'before');
    return undefined;
  },
  async run(ctx, args, io) {
    const limit = integerValue(args, 'limit') ?? 50;
    const filter = {
      since: since(args),
      actor: stringValue(args, 'actor'),
      action: stringValue(args, 'action'),
      before: integerValue(args, 'before'),
    };
    // One row more than shown says whether a next page exists.
    const found = await ctx.audit.list(filter, limit + 1);
    const entries = found.slice(0, limit);
    const next = found.length > limit ? entries.at(-1)?.id : undefined;
    if (args.values.json === true) {
      io.out(json({ entries, before: next ?? null }));
      return ExitCode.ok;
    }
    if (entries.length === 0) {
      io.out('No audit entries.');
      return ExitCode.ok;
    }
    io.out(table(entries.map(row), ['id', 'at', 'actor', 'action', 'on', 'from', 'outcome']));
    if (next !== undefined) {
      const kept = ['since', 'actor', 'action', 'limit']
        .map((name) => [name, stringValue(args, name)] as const)
        .filter(([, value]) => value !== undefined)
        .map(([name, value]) => ` --${name} ${value ?? ''}`)
        .join('');
      io.out(`\nOlder entries: npm run ops -- audit${kept} --before ${next}`);
    }
    return ExitCode.ok;
  },
};
