import type { Db } from '../db/database';
import type {
  AuditAction,
  AuditEntry,
  AuditFilter,
  AuditOutcome,
  AuditRecord,
} from './audit-entry';

/** Longest error text an outcome keeps: a problem code or a short refusal, not a dump. */
const ERROR_MAX = 200;

/**
 * All SQL of the audit log. Append-only by construction here (INSERT and SELECT only) and in the
 * database (migration 0005's triggers refuse UPDATE and DELETE), so a row once written stays.
 */
export class AuditRepository {
  constructor(private readonly db: Db) {}

  /** Records an action before it runs; its id settles the outcome later. */
  async record(entry: AuditEntry): Promise<number> {
    const row = await this.db
      .insertInto('audit_log')
      .values({
        actor: entry.actor.id,
        actor_kind: entry.actor.kind,
        action: entry.action,
        donation_id: entry.donationId ?? null,
        workflow_id: entry.workflowId ?? null,
        campaign_id: entry.campaignId ?? null,
        payload_count: entry.payloadCount ?? null,
        detail: JSON.stringify(entry.detail ?? {}),
        origin: entry.origin,
        request_id: entry.requestId ?? null,
        address: entry.address ?? null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  /** How the action ended; once per action (the primary key refuses a second outcome). */
  async settle(id: number, outcome: AuditOutcome): Promise<void> {
    await this.db
      .insertInto('audit_outcomes')
      .values({
        audit_id: id,
        outcome: outcome.outcome,
        status: outcome.status,
        error: outcome.error?.slice(0, ERROR_MAX) ?? null,
      })
      .execute();
  }

  /** Newest first, `limit` rows older than `filter.before` (keyset paging on the id). */
  async list(filter: AuditFilter, limit: number): Promise<AuditRecord[]> {
    let query = this.db
      .selectFrom('audit_log as l')
      .leftJoin('audit_outcomes as o', 'o.audit_id', 'l.id')
      .select([
        'l.id',
        'l.at',
        'l.actor',
        'l.actor_kind',
        'l.action',
        'l.donation_id',
        'l.workflow_id',
        'l.campaign_id',
        'l.payload_count',
        'l.detail',
        'l.origin',
        'l.request_id',
        'l.address',
        'o.outcome',
        'o.status',
        'o.error',
        'o.at as settled_at',
      ]);
    if (filter.before !== undefined) query = query.where('l.id', '<', filter.before);
    if (filter.since !== undefined) query = query.where('l.at', '>=', filter.since);
    if (filter.actor !== undefined) query = query.where('l.actor', '=', filter.actor);
    if (filter.action !== undefined) query = query.where('l.action', '=', filter.action);
    const rows = await query.orderBy('l.id', 'desc').limit(limit).execute();
    return rows.map((row) => ({
      id: row.id,
      at: row.at,
      actor: { kind: row.actor_kind, id: row.actor },
      action: row.action as AuditAction,
      donationId: row.donation_id ?? undefined,
      workflowId: row.workflow_id ?? undefined,
      campaignId: row.campaign_id ?? undefined,
      payloadCount: row.payload_count ?? undefined,
      detail: row.detail as AuditRecord['detail'],
      origin: row.origin,
      requestId: row.request_id ?? undefined,
      address: row.address ?? undefined,
      outcome:
        row.outcome === null || row.status === null || row.settled_at === null
          ? undefined
          : {
              outcome: row.outcome,
              status: row.status,
              error: row.error ?? undefined,
              at: row.settled_at,
            },
    }));
  }
}
