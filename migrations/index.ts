import type { Migration } from 'kysely';
import * as initial from './0001-initial';
import * as reconciliation from './0002-reconciliation';
import * as donationCorrelation from './0003-donation-correlation';
import * as moneyFollowsProvider from './0004-money-follows-provider';
import * as campaignTotalShards from './0005-campaign-total-shards';
import * as auditLog from './0006-audit-log';
import * as webhookBodyRetention from './0007-webhook-body-retention';
import * as donorWall from './0008-donor-wall';
import * as receipts from './0009-receipts';
import * as donorDetails from './0010-donor-details';
import * as pledges from './0011-pledges';
import * as pledgeMethods from './0012-pledge-methods';
import * as giveBackReceipts from './0013-give-back-receipts';
import * as mailBatches from './0014-mail-batches';
import * as keptMethodReleases from './0015-kept-method-releases';

/**
 * Migrations in order. Listed statically rather than read from the folder so they load the same
 * way under tsx, the compiled build and Jest.
 */
export const migrations: Record<string, Migration> = {
  '0001-initial': initial,
  '0002-reconciliation': reconciliation,
  '0003-donation-correlation': donationCorrelation,
  '0004-money-follows-provider': moneyFollowsProvider,
  '0005-campaign-total-shards': campaignTotalShards,
  '0006-audit-log': auditLog,
  '0007-webhook-body-retention': webhookBodyRetention,
  '0008-donor-wall': donorWall,
  '0009-receipts': receipts,
  '0010-donor-details': donorDetails,
  '0011-pledges': pledges,
  '0012-pledge-methods': pledgeMethods,
  '0013-give-back-receipts': giveBackReceipts,
  '0014-mail-batches': mailBatches,
  '0015-kept-method-releases': keptMethodReleases,
};
