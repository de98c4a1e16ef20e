import type { ColumnType, Generated } from 'kysely';
import type { DonationStatus, LedgerEntryType } from '../../workflows/contracts';

/** Column types as Kysely sees them. BIGINT arrives as a JS number (see database.ts). */
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export type CampaignStatus = 'OPEN' | 'CLOSED';

export interface CampaignsTable {
  id: string;
  title: string;
  goal_amount: number;
  currency: string;
  status: ColumnType<CampaignStatus, CampaignStatus | undefined, CampaignStatus>;
  ends_at: Date | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** The donor wall shows no amounts (migration 0008). */
  hide_amounts: ColumnType<boolean, boolean | undefined, boolean>;
}

export interface DonationsTable {
  id: string;
  client_id: string;
  idempotency_key: string;
  campaign_id: string;
  amount: number;
  currency: string;
  donor_name: string;
  donor_email: string;
  donor_anonymous: boolean;
  message: string | null;
  payment_method: string;
  status: ColumnType<DonationStatus, DonationStatus | undefined, DonationStatus>;
  provider: string;
  provider_reference: string | null;
  payment_action: ColumnType<unknown, string | null, string | null>;
  workflow_id: string;
  failure_reason: string | null;
  confirmed_at: Date | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** The X-Request-Id of the request that started the donation (migration 0003). */
  correlation_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** Set when reconciliation gave up handing the donation back (migration 0004). */
  dead_lettered_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  dead_letter_reason: ColumnType<string | null, string | null | undefined, string | null>;
  /** The name the donor wall shows, decided at insert; "Anonymous" unless given (migration 0008). */
  public_name: ColumnType<string, string | undefined, string>;
  /** When an operator hid the message from the donor wall (migration 0008). */
  message_hidden_at: ColumnType<
    Date | null,
    Date | string | null | undefined,
    Date | string | null
  >;
  /** When the donor was erased: their fields hold a pseudonym since (migration 0010). */
  erased_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

/** A donor's data from the edge's accept until the donation is recorded (migration 0010). */
export interface DonorDetailsTable {
  donation_id: string;
  donor_name: string;
  donor_email: string;
  donor_anonymous: boolean;
  message: string | null;
  created_at: Timestamp;
}

export type PledgeStatus = 'ACTIVE' | 'PAUSED' | 'CANCELLED';

/** A donor's monthly (or weekly) gift (migration 0011). */
export interface PledgesTable {
  id: string;
  client_id: string;
  idempotency_key: string;
  campaign_id: string;
  amount: number;
  currency: string;
  frequency: 'monthly' | 'weekly';
  day_of_period: number;
  time_zone: string;
  payment_method: string;
  provider: string;
  donor_name: string;
  donor_email: string;
  donor_anonymous: boolean;
  message: string | null;
  status: ColumnType<PledgeStatus, PledgeStatus | undefined, PledgeStatus>;
  created_at: Timestamp;
  updated_at: Timestamp;
  erased_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** The provider's reference to the method periods are charged with (migration 0012). */
  saved_method: ColumnType<string | null, string | null | undefined, string | null>;
  paused_reason: ColumnType<'payment-failed' | null, never, 'payment-failed' | null>;
}

/** A kept method a pledge let go of, to release at its provider (migration 0015). */
export interface KeptMethodReleasesTable {
  provider: string;
  saved_method: string;
  pledge_id: string;
  let_go_at: Generated<Date>;
  released_at: ColumnType<Date | null, never, Date | string | null>;
  attempts: ColumnType<number, never, number>;
  last_error: ColumnType<string | null, never, string | null>;
}

/** One row per attempt to charge a period, naming its donation (migrations 0011, 0012). */
export interface PledgePeriodsTable {
  pledge_id: string;
  period: string;
  attempt: ColumnType<number, number | undefined, never>;
  donation_id: string;
  amount: number;
  started_at: Timestamp;
  notified_at: ColumnType<Date | null, never, Date | string | null>;
  gave_up_at: ColumnType<Date | null, never, Date | string | null>;
}

export interface DonationLedgerTable {
  id: Generated<string>;
  donation_id: string;
  campaign_id: string;
  entry_type: LedgerEntryType;
  /** The provider's id of what moved the money: payment, refund or dispute (migration 0004). */
  external_ref: ColumnType<string, string | undefined, string>;
  amount: number;
  currency: string;
  created_at: Timestamp;
}

/** A slice of a campaign's total; confirmations spread over the shards (migration 0005). */
export interface CampaignTotalShardsTable {
  campaign_id: string;
  shard: number;
  confirmed_amount: Generated<number>;
  donation_count: Generated<number>;
  version: Generated<number>;
  updated_at: Timestamp;
}

/** The view of a campaign's shards, summed: read it, write the shards. */
export interface CampaignTotalsView {
  campaign_id: string;
  confirmed_amount: number;
  donation_count: number;
  version: number;
  updated_at: Date;
}

export interface WebhookInboxTable {
  id: Generated<string>;
  provider: string;
  event_key: string;
  donation_id: string | null;
  payload: ColumnType<unknown, string, string>;
  /** The bytes received; null once purged (`body_purged_at`) after the retention period. */
  raw_body: string | null;
  received_at: Timestamp;
  processed_at: Date | null;
  delivery_attempts: Generated<number>;
  last_error: string | null;
  body_purged_at: Date | null;
}

export interface ReconciliationRunsTable {
  run_id: string;
  workflow_id: string;
  campaigns_checked: number;
  drift_campaigns: number;
  repaired: number;
  stuck_restarted: number;
  inbox_redelivered: number;
  bodies_purged: Generated<number>;
  finished_at: Timestamp;
}

export interface ReconciliationRepairsTable {
  id: Generated<string>;
  run_id: string;
  campaign_id: string;
  before_amount: number;
  before_count: number;
  before_version: number;
  after_amount: number;
  after_count: number;
  after_version: number;
  repaired_at: Timestamp;
}

export type AuditActorKind = 'operator' | 'codec' | 'cli' | 'anonymous';

/** Append-only: the database refuses UPDATE and DELETE (migration 0005). */
export interface AuditLogTable {
  id: Generated<number>;
  at: Generated<Date>;
  actor: string;
  actor_kind: AuditActorKind;
  action: string;
  donation_id: string | null;
  workflow_id: string | null;
  campaign_id: string | null;
  payload_count: number | null;
  detail: ColumnType<Record<string, unknown>, string, never>;
  origin: 'http' | 'cli';
  request_id: string | null;
  address: string | null;
}

/** At most one per audit_log row, append-only like it (migration 0005). */
export interface AuditOutcomesTable {
  audit_id: number;
  outcome: 'succeeded' | 'failed';
  status: number;
  error: string | null;
  at: Generated<Date>;
}

export type ReceiptSeries = 'receipt' | 'credit-note';

/** A number given once, to one ledger entry (migration 0009). */
export interface ReceiptsTable {
  number: string;
  organization: string;
  series: ReceiptSeries;
  year: number;
  seq: number;
  ledger_entry_id: number;
  donation_id: string;
  /** What it reverses: a credit note's receipt, a give-back's credit note (migration 0013). */
  refers_to: string | null;
  issued_at: Timestamp;
}

/** Ledger entries waiting for their number, queued by a trigger in the ledger's transaction. */
export interface ReceiptQueueTable {
  ledger_entry_id: number;
  /** False for entries queued by the migration: numbered, never mailed. */
  mail: Generated<boolean>;
}

/** Numbered documents whose mail workflow has not been started yet. */
export interface MailQueueTable {
  receipt_number: string;
  queued_at: Timestamp;
  /** The mail batch that took it; null while it waits for one. */
  batch: string | null;
  claimed_at: Date | null;
}

export type MailDeliveryStatus = 'sending' | 'sent' | 'failed' | 'no-address';

export interface MailDeliveriesTable {
  receipt_number: string;
  message_id: string;
  status: MailDeliveryStatus;
  attempts: Generated<number>;
  last_error: string | null;
  sent_at: Date | null;
  updated_at: Timestamp;
  /** Until when the attempt sending it holds it; null when no attempt does. */
  held_until: Date | null;
}

export interface Database {
  campaigns: CampaignsTable;
  donations: DonationsTable;
  donor_details: DonorDetailsTable;
  pledges: PledgesTable;
  pledge_periods: PledgePeriodsTable;
  donation_ledger: DonationLedgerTable;
  campaign_total_shards: CampaignTotalShardsTable;
  campaign_totals: CampaignTotalsView;
  webhook_inbox: WebhookInboxTable;
  reconciliation_runs: ReconciliationRunsTable;
  reconciliation_repairs: ReconciliationRepairsTable;
  audit_log: AuditLogTable;
  audit_outcomes: AuditOutcomesTable;
  receipts: ReceiptsTable;
  receipt_queue: ReceiptQueueTable;
  mail_queue: MailQueueTable;
  mail_deliveries: MailDeliveriesTable;
  kept_method_releases: KeptMethodReleasesTable;
}
