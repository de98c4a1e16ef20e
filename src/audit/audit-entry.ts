import { donationWorkflowId } from '../../workflows/contracts';
import type { AuditActorKind } from '../db/schema';

/** What an operator did: one `audit_log` row each (docs/operations.md, "The audit log"). */
export const AUDIT_ACTIONS = [
  'refund',
  'reset',
  'redeliver',
  'reconcile',
  'show',
  'decode',
  'encode',
  'donation-read',
  'receipt-read',
  'campaign-create',
  'campaign-read',
  'campaign-close',
  'message-hide',
  'mail-resend',
  'erase',
  'pledge-read',
  'pledge-change',
  'pledge-pause',
  'pledge-resume',
  'pledge-cancel',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Who: the id of the key that authenticated (never its secret), or the CLI's user. */
export interface AuditActor {
  kind: AuditActorKind;
  id: string;
}

/** On what: ids and counts, never payload contents, donor data or free text. */
export interface AuditSubject {
  donationId?: string | undefined;
  workflowId?: string | undefined;
  campaignId?: string | undefined;
  payloadCount?: number | undefined;
  detail?: Readonly<Record<string, string | number | boolean | null>> | undefined;
}

/** One action, recorded before it runs. */
export interface AuditEntry extends AuditSubject {
  actor: AuditActor;
  action: AuditAction;
  /** From where: an HTTP request (its id and caller's address) or the ops CLI (its host). */
  origin: 'http' | 'cli';
  requestId?: string | undefined;
  address?: string | undefined;
}

/** How an action ended: its HTTP status or exit code, and the problem code when it failed. */
export interface AuditOutcome {
  outcome: 'succeeded' | 'failed';
  status: number;
  error?: string | undefined;
}

/** A row as listed: the entry, when it was recorded, and its outcome once known. */
export interface AuditRecord extends AuditEntry {
  id: number;
  at: Date;
  outcome: (AuditOutcome & { at: Date }) | undefined;
}

/** Filters of a listing, and its keyset: rows older than `before` (an id). */
export interface AuditFilter {
  since?: Date | undefined;
  actor?: string | undefined;
  action?: string | undefined;
  before?: number | undefined;
}

/** The subject of a route on one donation (`/…/:id`): the donation and its workflow. */
export function donationSubject(request: { params: unknown }): AuditSubject {
  const { id } = request.params as { id: string };
  return { donationId: id, workflowId: donationWorkflowId(id) };
}
