import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';

export const ErasureBody = Type.Union(
  [
    Type.Object(
      { email: Type.String({ format: 'email', minLength: 3, maxLength: 254 }) },
      { additionalProperties: false },
    ),
    Type.Object({ donationId: Type.String({ format: 'uuid' }) }, { additionalProperties: false }),
  ],
  { description: "The donor's e-mail address, or one of their donations' id." },
);
export type ErasureBody = Static<typeof ErasureBody>;

export const ErasureDone = Type.Object({
  erasedDonations: Type.Integer({
    description:
      "Donations whose donor's fields now hold the pseudonym; 0 when nothing matched " +
      '(an erasure made before included: its rows no longer carry the address).',
  }),
  webhookBodiesPurged: Type.Integer(),
  erasedAt: Type.String({ format: 'date-time' }),
});
export type ErasureDone = Static<typeof ErasureDone>;
