import type { Client } from '@temporalio/client';
import type { ProgressCache } from '../campaigns/progress-cache';
import type { Db } from '../db/database';
import { DonationRepository } from '../donations/donation-repository';
import type { ProviderRegistry } from '../providers/payment-provider';
import { MoneyWorkflows } from '../temporal/money-workflows';
import { WebhookDelivery } from '../webhooks/webhook-delivery';
import { WebhookInboxRepository } from '../webhooks/webhook-inbox-repository';
import { Reconciler } from './reconciler';
import { ReconciliationRepository } from './reconciliation-repository';
import { StuckDonations } from './stuck-donations';

export interface ReconcilerOptions {
  db: Db;
  progressCache: ProgressCache;
  temporal: Client;
  taskQueue: string;
  providers: ProviderRegistry;
  paymentTimeoutSeconds: number;
  settleHorizonSeconds: number;
  graceSeconds: number;
}

/** Wires a {@link Reconciler}; the worker, the ops CLI and the tests build theirs here. */
export function createReconciler(options: ReconcilerOptions): Reconciler {
  const repository = new ReconciliationRepository(options.db);
  const inbox = new WebhookInboxRepository(options.db);
  const donations = new DonationRepository(options.db);
  return new Reconciler({
    repository,
    progressCache: options.progressCache,
    inbox,
    delivery: new WebhookDelivery({
      inbox,
      donations,
      providers: options.providers,
      temporal: options.temporal,
      moneyWorkflows: new MoneyWorkflows(options.temporal, options.taskQueue),
    }),
    stuck: new StuckDonations({
      repository,
      donations,
      temporal: options.temporal,
      taskQueue: options.taskQueue,
      providers: options.providers,
      paymentTimeoutSeconds: options.paymentTimeoutSeconds,
      settleHorizonSeconds: options.settleHorizonSeconds,
      graceSeconds: options.graceSeconds,
    }),
    graceSeconds: options.graceSeconds,
  });
}
