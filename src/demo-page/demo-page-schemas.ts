import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';

/** The page's own files under /demo/assets/; nothing else in its folder is served. */
export const PAGE_ASSETS = [
  'page.js',
  'amounts.js',
  'api.js',
  'progress.js',
  'wall.js',
  'pledge.js',
  'page.css',
  'favicon.svg',
] as const;

export const AssetParams = Type.Object({
  file: Type.Union(PAGE_ASSETS.map((file) => Type.Literal(file))),
});

export const PageConfig = Type.Object({
  /** The campaign `/` shows. */
  defaultCampaignId: Type.String(),
  /** The client key the page donates with: outside production only, null otherwise. */
  clientKey: Type.Union([Type.String(), Type.Null()]),
  temporalUi: Type.Object({ url: Type.String(), namespace: Type.String() }),
  /** Whether `POST /demo/donations/:id/simulate-payment` exists (development, simulator). */
  simulatePayments: Type.Boolean(),
});
export type PageConfig = Static<typeof PageConfig>;

export const PageCampaign = Type.Object({
  id: Type.String(),
  title: Type.String(),
  goalAmount: Type.Integer(),
  currency: Type.String(),
  /** ISO 4217 exponent: amounts are integers in minor units, shown with this many decimals. */
  minorUnits: Type.Integer(),
  acceptingDonations: Type.Boolean(),
});

export const QrSvg = Type.String({ description: 'image/svg+xml' });

export const SimulatedPayment = Type.Object({
  donationId: Type.String({ format: 'uuid' }),
  /** The simulator's status of the payment after the call (`settled` once paid). */
  paymentStatus: Type.String(),
});
