import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';

export const WallQuery = Type.Object(
  {
    // Strings: query values are not coerced (the API's Ajv coerces nothing).
    limit: Type.Optional(
      Type.String({
        pattern: '^([1-9]|[1-4][0-9]|50)$',
        description: 'Donations per page, 1–50; 20 when omitted.',
      }),
    ),
    cursor: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9_-]{1,200}$',
        description: "The previous page's `next`: opaque, only as this API gave it.",
      }),
    ),
  },
  { additionalProperties: false },
);

export const WallEntry = Type.Object({
  name: Type.String({ description: '"Anonymous" when the donor asked to be; links removed.' }),
  amount: Type.Union([Type.Integer(), Type.Null()], {
    description: 'Minor units kept after partial refunds; null when the campaign hides amounts.',
  }),
  message: Type.Union([Type.String(), Type.Null()], {
    description: 'Plain text, links replaced by "[link removed]"; null if none or hidden.',
  }),
  confirmedAt: Type.String({ format: 'date-time' }),
});
export type WallEntry = Static<typeof WallEntry>;

export const WallResponse = Type.Object({
  campaignId: Type.String(),
  currency: Type.String(),
  hideAmounts: Type.Boolean(),
  donations: Type.Array(WallEntry, { description: 'Newest confirmation first.' }),
  next: Type.Union([Type.String(), Type.Null()], {
    description: 'The cursor of the next page; null on the last one.',
  }),
});
export type WallView = Static<typeof WallResponse>;

export const MessageHidden = Type.Object({
  donationId: Type.String({ format: 'uuid' }),
  messageHidden: Type.Literal(true),
  hiddenAt: Type.String({
    format: 'date-time',
    description: 'The first hiding; a repeat keeps it.',
  }),
});
export type MessageHidden = Static<typeof MessageHidden>;
