import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { MAX_DONATION_MINOR_UNITS } from '../money/currency';
import { SingleLineText } from '../http/text-schemas';

const CAMPAIGN_ID_PATTERN = '^[A-Za-z0-9_-]{1,64}$';

export const CampaignParams = Type.Object({
  id: Type.String({ pattern: CAMPAIGN_ID_PATTERN, examples: ['banjir-demak-2026'] }),
});

export const CreateCampaignBody = Type.Object(
  {
    id: Type.Optional(
      Type.String({
        pattern: CAMPAIGN_ID_PATTERN,
        description: 'A slug of your choice for campaign URLs; generated when omitted.',
        examples: ['banjir-demak-2026'],
      }),
    ),
    title: SingleLineText({ minLength: 1, maxLength: 200 }),
    goalAmount: Type.Integer({
      minimum: 1,
      maximum: MAX_DONATION_MINOR_UNITS * 1_000,
      description: "In the currency's minor units.",
    }),
    currency: Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code' }),
    endsAt: Type.Optional(
      Type.String({ format: 'date-time', description: 'Donations are refused after this.' }),
    ),
    hideAmounts: Type.Optional(
      Type.Boolean({
        default: false,
        description: "The donor wall shows each donation's name and message, not its amount.",
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateCampaignBody = Static<typeof CreateCampaignBody>;

export const CampaignView = Type.Object({
  id: Type.String(),
  title: Type.String(),
  goalAmount: Type.Integer(),
  currency: Type.String(),
  status: Type.Union([Type.Literal('OPEN'), Type.Literal('CLOSED')]),
  endsAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  acceptingDonations: Type.Boolean(),
  hideAmounts: Type.Boolean(),
  confirmedAmount: Type.Integer(),
  donationCount: Type.Integer(),
  updatedAt: Type.String({ format: 'date-time' }),
});
export type CampaignView = Static<typeof CampaignView>;

export const ProgressResponse = Type.Object({
  campaignId: Type.String(),
  goalAmount: Type.Integer(),
  confirmedAmount: Type.Integer(),
  donationCount: Type.Integer(),
  percent: Type.Number({ description: 'Of the goal, floored to two decimals; may exceed 100.' }),
  currency: Type.String(),
  updatedAt: Type.String({ format: 'date-time' }),
  stale: Type.Boolean({
    description: 'True while a refresh runs or a dependency is down: the value may be behind.',
  }),
});
