import type { Client } from '@temporalio/client';
import type { ProgressCache } from '../campaigns/progress-cache';
import { CampaignRepository } from '../campaigns/campaign-repository';
import type { Config } from '../config/config';
import type { Db } from '../db/database';
import { DonationRepository } from '../donations/donation-repository';
import { DonationService } from '../donations/donation-service';
import type { ProviderRegistry } from '../providers/payment-provider';
import { createReconciler } from '../reconciliation/create-reconciler';
import type { Reconciler } from '../reconciliation/reconciler';
import { MoneyWorkflows } from '../temporal/money-workflows';
import { WebhookDelivery } from '../webhooks/webhook-delivery';
import { WebhookInboxRepository } from '../webhooks/webhook-inbox-repository';

/** Where a command writes: stdout for results, stderr for diagnostics. */
export interface OpsIo {
  out(text: string): void;
  err(text: string): void;
}

/** Everything a command may use, built once per invocation (and by tests from their stack). */
export interface OpsContext {
  config: Config;
  db: Db;
  temporal: Client;
  donations: DonationRepository;
  donationService: DonationService;
  delivery: WebhookDelivery;
  reconciler: Reconciler;
}

export interface OpsResources {
  config: Config;
  db: Db;
  temporal: Client;
  progressCache: ProgressCache;
  providers: ProviderRegistry;
}

/** The same services the API and the worker use, so the CLI never has a code path of its own. */
export function buildOpsContext(resources: OpsResources): OpsContext {
  const { config, db, temporal, providers } = resources;
  const donations = new DonationRepository(db);
  const taskQueue = config.temporal.taskQueue;
  const moneyWorkflows = new MoneyWorkflows(temporal, taskQueue);
  return {
    config,
    db,
    temporal,
    donations,
    donationService: new DonationService({
      temporal,
      campaigns: new CampaignRepository(db),
      donations,
      providers,
      moneyWorkflows,
      taskQueue,
      provider: config.payments.provider,
      verifyWithProvider: providers.get(config.payments.provider)?.verifyWithProvider ?? false,
      paymentTimeoutSeconds: config.paymentTimeoutSeconds,
      settleHorizonSeconds: config.settleHorizonSeconds,
      temporalTimeoutMs: config.temporal.requestTimeoutMs,
      earlyReturn: config.earlyReturn,
    }),
    delivery: new WebhookDelivery({
      inbox: new WebhookInboxRepository(db),
      donations,
      providers,
      temporal,
      moneyWorkflows,
    }),
    reconciler: createReconciler({
      db,
      progressCache: resources.progressCache,
      temporal,
      taskQueue,
      providers,
      paymentTimeoutSeconds: config.paymentTimeoutSeconds,
      settleHorizonSeconds: config.settleHorizonSeconds,
      graceSeconds: config.reconciliation.graceSeconds,
    }),
  };
}
