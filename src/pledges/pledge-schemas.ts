import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { CreateDonationBody, DonationAccepted } from '../donations/donation-schemas';

export const CreatePledgeBody = Type.Composite(
  [
    Type.Omit(CreateDonationBody, []),
    Type.Object({
      interval: Type.Union([Type.Literal('monthly'), Type.Literal('weekly')]),
      dayOfPeriod: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: 31,
          description:
            'Monthly: the day of the month (29–31 fall on the last day of shorter months); ' +
            'weekly: 1 (Monday) to 7. Default: today, in the time zone.',
        }),
      ),
      timeZone: Type.Optional(
        Type.String({
          pattern: '^[A-Za-z_]+(/[A-Za-z0-9_+-]+){0,2}$',
          maxLength: 64,
          description: 'An IANA time zone; Asia/Jakarta by default.',
        }),
      ),
    }),
  ],
  { additionalProperties: false },
);
export type CreatePledgeBody = Static<typeof CreatePledgeBody>;

export const PledgeParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

export const PledgeTokenQuery = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 128 }),
});

export const ChangePledgeBody = Type.Object(
  {
    amount: Type.Optional(CreateDonationBody.properties.amount),
    paymentMethod: Type.Optional(CreateDonationBody.properties.paymentMethod),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const PledgeView = Type.Object({
  id: Type.String({ format: 'uuid' }),
  status: Type.Union([Type.Literal('ACTIVE'), Type.Literal('PAUSED'), Type.Literal('CANCELLED')]),
  campaignId: Type.String(),
  amount: Type.Integer({ description: 'What each period from the next one charges' }),
  currency: Type.String(),
  interval: Type.Union([Type.Literal('monthly'), Type.Literal('weekly')]),
  dayOfPeriod: Type.Integer(),
  timeZone: Type.String(),
  paymentMethod: Type.String(),
  donor: Type.Object(
    { anonymous: Type.Boolean() },
    {
      description:
        "No name or address: the answer is kept for the key's replays, where no donor data goes.",
    },
  ),
  createdAt: Type.String({ format: 'date-time' }),
  periods: Type.Array(
    Type.Object({
      period: Type.String({ examples: ['2026-12'] }),
      attempt: Type.Integer({
        minimum: 0,
        description: "0, then the dunning's retries of a period that failed",
      }),
      donationId: Type.String({ format: 'uuid' }),
      amount: Type.Integer(),
      status: Type.Union([Type.String(), Type.Null()], {
        description: "The period's donation, as GET /v1/donations/:id shows it",
      }),
      startedAt: Type.String({ format: 'date-time' }),
    }),
    { description: 'The last 24 attempts to charge a period, newest first.' },
  ),
  links: Type.Object({
    self: Type.String(),
    manage: Type.String({ description: "The donor's link: opens the pledge without a key." }),
  }),
});
export type PledgeView = Static<typeof PledgeView>;

export const PledgeAccepted = Type.Object({
  pledge: PledgeView,
  firstDonation: DonationAccepted,
});
