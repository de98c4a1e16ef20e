import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { MAX_DONATION_MINOR_UNITS } from '../money/currency';
import { MultiLineText, SingleLineText } from '../http/text-schemas';

export const CreateDonationBody = Type.Object(
  {
    campaignId: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }),
    amount: Type.Integer({
      minimum: 1,
      maximum: MAX_DONATION_MINOR_UNITS,
      description: "Integer, in the currency's minor units (IDR has none: 50000 is Rp 50.000).",
    }),
    currency: Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code' }),
    donor: Type.Object(
      {
        name: SingleLineText({ minLength: 1, maxLength: 200 }),
        email: Type.String({ format: 'email', maxLength: 254 }),
        anonymous: Type.Boolean({ default: false }),
      },
      { additionalProperties: false },
    ),
    message: Type.Optional(MultiLineText({ maxLength: 1000 })),
    paymentMethod: Type.String({ pattern: '^[a-z_]{2,32}$', examples: ['qris'] }),
  },
  { additionalProperties: false },
);
export type CreateDonationBody = Static<typeof CreateDonationBody>;

export const DonationParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

export const DonationQuery = Type.Object(
  {
    // A string: query values are not coerced (the API's Ajv coerces nothing).
    wait: Type.Optional(
      Type.String({
        pattern: '^([0-9]|[12][0-9]|30)$',
        description:
          'Seconds to hold the request while the donation is PENDING without its payment ' +
          'action (0–30); answers as soon as the action exists or the donation is decided.',
      }),
    ),
  },
  { additionalProperties: false },
);

const PaymentActionSchema = Type.Object({
  type: Type.Union([Type.Literal('qr'), Type.Literal('redirect'), Type.Literal('virtual_account')]),
  value: Type.String(),
});

export const DonationAccepted = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    status: Type.String({
      description:
        'AWAITING_PAYMENT with the payment action; PENDING with `paymentAction: null` when the ' +
        'provider had not created the payment within the wait (GET `links.self` shows it).',
    }),
    campaignId: Type.String(),
    amount: Type.Integer(),
    currency: Type.String(),
    /** What the donor does to pay: a QR string, a redirect URL, a virtual account number. */
    paymentAction: Type.Union([PaymentActionSchema, Type.Null()]),
    links: Type.Object({ self: Type.String() }),
  },
  {
    description:
      'Accepted. With `paymentAction: null` the answer also carries `Retry-After`: read ' +
      '`Location` (e.g. `?wait=10`) for the action. Either is the stored answer of the key.',
  },
);
export type DonationAccepted = Static<typeof DonationAccepted>;

export const DonationView = Type.Object({
  id: Type.String({ format: 'uuid' }),
  status: Type.String(),
  campaignId: Type.String(),
  amount: Type.Integer(),
  currency: Type.String(),
  donor: Type.Object({ name: Type.String(), anonymous: Type.Boolean() }),
  message: Type.Union([Type.String(), Type.Null()]),
  paymentMethod: Type.String(),
  provider: Type.String(),
  paymentAction: Type.Union([PaymentActionSchema, Type.Null()]),
  failureReason: Type.Union([Type.String(), Type.Null()]),
  confirmedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
  /** The donation's workflow in the Temporal UI, whether or not it still runs. */
  workflowId: Type.String(),
  workflow: Type.Optional(
    Type.Object({
      id: Type.String(),
      running: Type.Boolean(),
      state: Type.Optional(Type.Unknown()),
    }),
  ),
});
export type DonationView = Static<typeof DonationView>;

export const RefundBody = Type.Object(
  {
    amount: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Minor units; the whole donation when omitted.' }),
    ),
    reason: SingleLineText({ minLength: 1, maxLength: 255 }),
  },
  { additionalProperties: false },
);

export const RefundAccepted = Type.Object({
  donationId: Type.String({ format: 'uuid' }),
  kind: Type.Literal('REFUND'),
  amount: Type.Integer(),
  status: Type.Literal('REQUESTED'),
  workflowId: Type.String(),
  links: Type.Object({ donation: Type.String() }),
});
export type RefundAccepted = Static<typeof RefundAccepted>;
