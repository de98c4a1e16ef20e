import type { Client } from '@temporalio/client';
import type { AuditRepository } from '../audit/audit-repository';
import type { OpsActor } from '../audit/ops-actor';
import type { Config } from '../config/config';
import type { Db } from '../db/database';
import type { DonationRepository } from '../donations/donation-repository';
import type { DonationService } from '../donations/donation-service';
import type { DonorErasure } from '../privacy/donor-erasure';
import type { PledgeRepository } from '../pledges/pledge-repository';
import type { Reconciler } from '../reconciliation/reconciler';
import type { MailDeliveryRepository } from '../receipts/mail-delivery-repository';
import type { ReceiptRepository } from '../receipts/receipt-repository';
import type { WebhookDelivery } from '../webhooks/webhook-delivery';

/** Where a command writes: stdout for results, stderr for diagnostics. */
export interface OpsIo {
  out(text: string): void;
  err(text: string): void;
}

/**
 * Everything a command may use: the same services the API and the worker use (built by
 * src/runtime/create-services.ts), so the CLI never has a code path of its own.
 */
export interface OpsContext {
  config: Config;
  /** Who runs the CLI: the actor of its audit rows. */
  actor: OpsActor;
  audit: AuditRepository;
  db: Db;
  temporal: Client;
  donations: DonationRepository;
  donationService: DonationService;
  erasure: DonorErasure;
  pledgeRepository: PledgeRepository;
  delivery: WebhookDelivery;
  reconciler: Reconciler;
  receipts: ReceiptRepository;
  mailDeliveries: MailDeliveryRepository;
}
