import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * Search attributes operators filter by in the Temporal UI. The dev server registers them at
 * start (see src/temporal/dev-server.ts); a production namespace needs
 * `temporal operator search-attribute create` once.
 */
export const CampaignIdAttribute = defineSearchAttributeKey(
  'CampaignId',
  SearchAttributeType.KEYWORD,
);
export const DonationStatusAttribute = defineSearchAttributeKey(
  'DonationStatus',
  SearchAttributeType.KEYWORD,
);
export const ProviderAttribute = defineSearchAttributeKey('Provider', SearchAttributeType.KEYWORD);

export const searchAttributeNames = ['CampaignId', 'DonationStatus', 'Provider'] as const;
