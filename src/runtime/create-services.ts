import type { Client } from '@temporalio/client';
import type { Redis } from 'ioredis';
import { AuditRepository } from '../audit/audit-repository';
import { opsActor } from '../audit/ops-actor';
import { CampaignRepository } from '../campaigns/campaign-repository';
import { DonorWallCache } from '../campaigns/donor-wall-cache';
import { DonorWallRepository } from '../campaigns/donor-wall-repository';
import { ProgressCache } from '../campaigns/progress-cache';
import type { Config } from '../config/config';
import type { Db } from '../db/database';
import { DonationRepository } from '../donations/donation-repository';
import { DonationReads } from '../donations/donation-reads';
import { DonationService } from '../donations/donation-service';
import { DonorDetailsRepository } from '../donations/donor-details-repository';
import { FollowUpWorkflows } from '../donations/follow-up-workflows';
import { LedgerRepository } from '../ledger/ledger-repository';
import { RunningDonations } from '../donations/running-donations';
import { KeptMethodReleaser } from '../pledges/kept-method-releaser';
import { KeptMethodReleases } from '../pledges/kept-method-releases';
import { PledgeBilling } from '../pledges/pledge-billing';
import { PledgeLinks } from '../pledges/pledge-links';
import { PledgeMailer } from '../pledges/pledge-mailer';
import { PledgeRepository } from '../pledges/pledge-repository';
import { PledgeSchedules } from '../pledges/pledge-schedules';
import { PledgeService } from '../pledges/pledge-service';
import { DonorErasure } from '../privacy/donor-erasure';
import { ErasureRepository } from '../privacy/erasure-repository';
import type { Metrics } from '../observability/metrics';
import type { OpsContext } from '../ops/ops-context';
import type { ProviderRegistry } from '../providers/payment-provider';
import { verifiesWithProvider } from '../providers/provider-verification';
import { Reconciler } from '../reconciliation/reconciler';
import { ReconciliationRepository } from '../reconciliation/reconciliation-repository';
import { MailSender } from '../mail/mail-sender';
import { MailDeliveryRepository } from '../receipts/mail-delivery-repository';
import { ReceiptDocuments } from '../receipts/receipt-documents';
import { ReceiptFonts } from '../receipts/receipt-fonts';
import { ReceiptMailer } from '../receipts/receipt-mailer';
import { ReceiptRepository } from '../receipts/receipt-repository';
import { ReceiptService } from '../receipts/receipt-service';
import { ReceiptWorkflows, receiptsTaskQueue } from '../receipts/receipt-workflows';
import { StuckDonations } from '../reconciliation/stuck-donations';
import { WebhookDelivery } from '../webhooks/webhook-delivery';
import { WebhookInboxRepository } from '../webhooks/webhook-inbox-repository';
import { WebhookIntake } from '../webhooks/webhook-intake';

/** What a process opens before it builds anything: pools, clients and the providers it talks to. */
export interface Resources {
  db: Db;
  /** The webhook intake's own small pool, so public reads cannot starve it; else `db`. */
  webhookDb?: Db | undefined;
  redis: Redis;
  temporal: Client;
  providers: ProviderRegistry;
  /** The API's registry; the worker and the ops CLI count nothing here. */
  metrics?: Metrics | undefined;
  /** The provider new donations use; `config.payments.provider` unless a test picks another. */
  defaultProvider?: string | undefined;
}

/** The object graph of galang, built once per process; each entry point takes what it needs. */
export interface Services {
  /** The operators' audit log: the API's audit plugin and the ops CLI write it. */
  audit: AuditRepository;
  campaigns: CampaignRepository;
  donations: DonationRepository;
  ledger: LedgerRepository;
  reconciliation: ReconciliationRepository;
  progressCache: ProgressCache;
  /** The donor wall's pages: the API reads them, the worker drops them on every money move. */
  wallCache: DonorWallCache;
  wall: DonorWallRepository;
  followUps: FollowUpWorkflows;
  donationService: DonationService;
  donationReads: DonationReads;
  /** A donor's erasure: the operators' route and `npm run ops -- erase`. */
  erasure: DonorErasure;
  /** Monthly giving: the API's routes, the period activity, `npm run ops -- pledges`. */
  pledges: PledgeService;
  pledgeRepository: PledgeRepository;
  /** A pledge's kept methods, notices and dunning: the period workflow's activities. */
  pledgeBilling: PledgeBilling;
  /** Releases the cards pledges let go of: reconciliation's activity. */
  keptMethods: KeptMethodReleaser;
  delivery: WebhookDelivery;
  intake: WebhookIntake;
  reconciler: Reconciler;
  receipts: ReceiptRepository;
  mailDeliveries: MailDeliveryRepository;
  receiptDocuments: ReceiptDocuments;
  receiptService: ReceiptService;
  receiptWorkflows: ReceiptWorkflows;
  /** The worker's activities send receipts with it. */
  receiptMailer: ReceiptMailer;
  /** Receipts' and pledges' mail: its pooled connections are closed by whoever built this. */
  mailSender: MailSender;
}

/**
 * The one place that builds the services: a new dependency is threaded here once, and the API,
 * the worker and the ops CLI cannot drift apart. Nothing here opens a connection or starts work.
 */
export function createServices(config: Config, resources: Resources): Services {
  const { db, temporal, providers, metrics } = resources;
  const taskQueue = config.temporal.taskQueue;
  const provider = resources.defaultProvider ?? config.payments.provider;
  const campaigns = new CampaignRepository(db);
  const donations = new DonationRepository(db);
  const reconciliation = new ReconciliationRepository(db);
  const progressCache = new ProgressCache(resources.redis, config.progress);
  const followUps = new FollowUpWorkflows(temporal, taskQueue);
  const ledger = new LedgerRepository(db);
  // Webhooks go through their own pool where the process has one (the API).
  const webhookDb = resources.webhookDb ?? db;
  const inbox = new WebhookInboxRepository(webhookDb);
  const receipts = new ReceiptRepository(db);
  const mailDeliveries = new MailDeliveryRepository(db);
  const donorDetails = new DonorDetailsRepository(db);
  const wallCache = new DonorWallCache(resources.redis);
  const tokenSecrets = [...config.mail.receiptTokenSecrets.values()];
  const receiptDocuments = new ReceiptDocuments(
    {
      organization: config.mail.organization,
      timeZone: config.mail.organization.timeZone,
      publicUrl: config.publicUrl,
      tokenSecrets,
    },
    new ReceiptFonts(),
  );
  const delivery = new WebhookDelivery({
    inbox,
    donations: webhookDb === db ? donations : new DonationRepository(webhookDb),
    providers,
    temporal,
    followUps,
    metrics: metrics?.webhooks,
  });
  const donationService = new DonationService({
    temporal,
    campaigns,
    donations,
    donorDetails,
    providers,
    followUps,
    taskQueue,
    provider,
    closingProviders: config.payments.closing,
    verifyWithProvider: verifiesWithProvider(providers, provider),
    paymentTimeoutSeconds: config.paymentTimeoutSeconds,
    settleHorizonSeconds: config.settleHorizonSeconds,
    temporalTimeoutMs: config.temporal.requestTimeoutMs,
    earlyReturn: config.earlyReturn,
    metrics: metrics?.donations,
  });
  const pledgeRepository = new PledgeRepository(db);
  const pledgeSchedules = new PledgeSchedules(temporal, taskQueue, config.pledges.calendar);
  const pledgeLinks = new PledgeLinks(tokenSecrets);
  const mailSender = new MailSender(config.mail);
  const pledgeBilling = new PledgeBilling({
    pledges: pledgeRepository,
    donations,
    running: new RunningDonations(temporal),
    providers,
    schedules: pledgeSchedules,
    mailer: new PledgeMailer(mailSender, config.mail.from, config.publicUrl),
    manageLink: (pledgeId) => pledgeLinks.manageLink(pledgeId),
    retryDelaysMs: config.pledges.retryDelaysMs,
  });
  return {
    receipts,
    mailDeliveries,
    receiptDocuments,
    receiptService: new ReceiptService(receipts, receiptDocuments, tokenSecrets),
    receiptWorkflows: new ReceiptWorkflows(temporal, receiptsTaskQueue(taskQueue)),
    receiptMailer: new ReceiptMailer(
      receipts,
      mailDeliveries,
      receiptDocuments,
      mailSender,
      config.mail.from,
      (pledgeId) => `${config.publicUrl}${pledgeLinks.manageLink(pledgeId)}`,
    ),
    mailSender,
    audit: new AuditRepository(db),
    campaigns,
    donations,
    ledger,
    reconciliation,
    progressCache,
    wallCache,
    wall: new DonorWallRepository(db),
    followUps,
    donationService,
    donationReads: new DonationReads({ temporal, donations, donorDetails }),
    pledgeRepository,
    pledges: new PledgeService({
      pledges: pledgeRepository,
      schedules: pledgeSchedules,
      donations: donationService,
      calendar: config.pledges.calendar,
      timeZone: config.pledges.timeZone,
      provider,
      links: pledgeLinks,
      billing: pledgeBilling,
    }),
    pledgeBilling,
    keptMethods: new KeptMethodReleaser(new KeptMethodReleases(db), providers),
    erasure: new DonorErasure(new ErasureRepository(db), wallCache, pledgeSchedules),
    delivery,
    intake: new WebhookIntake({
      providers,
      inbox,
      delivery,
      metrics: metrics?.webhooks,
      redeliveryMaxAgeMs:
        config.reconciliation.intervalSeconds === 0
          ? undefined
          : config.reconciliation.graceSeconds * 1000,
    }),
    reconciler: new Reconciler({
      repository: reconciliation,
      progressCache,
      inbox,
      delivery,
      stuck: new StuckDonations({
        repository: reconciliation,
        donations,
        followUps,
        temporal,
        taskQueue,
        providers,
        paymentTimeoutSeconds: config.paymentTimeoutSeconds,
        settleHorizonSeconds: config.settleHorizonSeconds,
        graceSeconds: config.reconciliation.graceSeconds,
      }),
      graceSeconds: config.reconciliation.graceSeconds,
      providerSweep: {
        donations,
        ledger,
        providers,
        followUps,
        windowDays: config.reconciliation.providerWindowDays,
      },
      bodyRetentionDays: config.webhooks.bodyRetentionDays,
      donorDetails,
    }),
  };
}

/** The ops CLI's context: its config and resources, and the services built from them. */
export function createOpsContext(config: Config, resources: Resources): OpsContext {
  const services = createServices(config, resources);
  return {
    config,
    actor: opsActor(config.opsActor),
    db: resources.db,
    temporal: resources.temporal,
    ...services,
  };
}
