import path from 'node:path';
import helmet from '@fastify/helmet';
import fastifyStatic from '@fastify/static';
import type { FastifyHelmetOptions } from '@fastify/helmet';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import QRCode from 'qrcode';
import { acceptsDonations } from '../campaigns/campaign-repository';
import type { CampaignRepository } from '../campaigns/campaign-repository';
import { CampaignParams } from '../campaigns/campaign-schemas';
import type { Config } from '../config/config';
import { DonationParams } from '../donations/donation-schemas';
import type { DonationRepository } from '../donations/donation-repository';
import { AppError } from '../errors/error-catalogue';
import { PAGE_HELMET_OPTIONS } from '../security/security-headers';
import { currencyExponents, isSupportedCurrency } from '../money/currency';
import {
  AssetParams,
  PageCampaign,
  PageConfig,
  QrSvg,
  SimulatedPayment,
} from './demo-page-schemas';
import { settleAtSimulator } from './simulator-settle';

export interface DemoPageOptions {
  config: Config;
  campaigns: CampaignRepository;
  donations: DonationRepository;
  /** Offer "simulate payment": development, with the simulator as the provider. */
  simulatePayments: boolean;
}

/** The campaign `npm start` seeds, shown at `/`. */
export const DEMO_CAMPAIGN_ID = 'demo';

const PUBLIC_DIR = path.join(__dirname, 'public');

/**
 * Everything the page loads comes from this origin and no script is inline, so the policy can
 * forbid the rest; the form is sent by script, never by navigation.
 */
export const DEMO_PAGE_HELMET_OPTIONS: FastifyHelmetOptions = {
  ...PAGE_HELMET_OPTIONS,
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'none'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'"],
      imgSrc: ["'self'"],
      connectSrc: ["'self'"],
      baseUri: ["'none'"],
      formAction: ["'none'"],
      frameAncestors: ["'none'"],
    },
  },
};

/** The page's routes are public; they are not part of the API, so not in its document. */
const PUBLIC = { auth: 'none' } as const;

/**
 * The campaign page: plain HTML, CSS and one ES module from ./public, plus the few
 * public JSON and image routes it needs. Registered only when DEMO_PAGE allows it; it calls the
 * public API like any front end, with the development client key this plugin hands it.
 */
const demoPagePlugin: FastifyPluginAsyncTypebox<DemoPageOptions> = async (app, options) => {
  const { config, campaigns, donations } = options;
  await app.register(fastifyStatic, { root: PUBLIC_DIR, serve: false });
  // Encapsulated: only this plugin's routes carry the page's headers and policy.
  await app.register(helmet, DEMO_PAGE_HELMET_OPTIONS);

  app.get('/', { config: PUBLIC, schema: { hide: true } }, async (_request, reply) =>
    reply.sendFile('index.html'),
  );
  app.get(
    '/campaigns/:id',
    { config: PUBLIC, schema: { hide: true, params: CampaignParams } },
    async (_request, reply) => reply.sendFile('index.html'),
  );
  app.get(
    '/demo/assets/:file',
    { config: PUBLIC, schema: { hide: true, params: AssetParams } },
    async (request, reply) => reply.sendFile(request.params.file),
  );

  const pageConfig: PageConfig = {
    defaultCampaignId: DEMO_CAMPAIGN_ID,
    // Never in production: a key in a page is public, fit only for a development client.
    clientKey: config.env === 'production' ? null : ([...config.apiKeys.values()][0] ?? null),
    temporalUi: { url: config.temporal.uiUrl, namespace: config.temporal.namespace },
    simulatePayments: options.simulatePayments,
  };
  app.get(
    '/demo/config.json',
    { config: PUBLIC, schema: { hide: true, response: { 200: PageConfig } } },
    async (_request, reply) => reply.header('cache-control', 'no-store').send(pageConfig),
  );

  app.get(
    '/demo/campaigns/:id',
    {
      config: PUBLIC,
      schema: { hide: true, params: CampaignParams, response: { 200: PageCampaign } },
    },
    async (request) => {
      const campaign = await campaigns.findById(request.params.id);
      if (!campaign) throw new AppError('campaign-not-found');
      if (!isSupportedCurrency(campaign.currency)) throw new AppError('unsupported-currency');
      return {
        id: campaign.id,
        title: campaign.title,
        goalAmount: campaign.goalAmount,
        currency: campaign.currency,
        minorUnits: currencyExponents[campaign.currency],
        acceptingDonations: acceptsDonations(campaign, new Date()),
      };
    },
  );

  // The donation's own QR string, drawn by `qrcode` as SVG (the package ships no browser build).
  // Only a payment action galang stored is drawn: no caller's text is ever shown on this origin.
  app.get(
    '/demo/donations/:id/qr.svg',
    {
      config: PUBLIC,
      logLevel: 'warn',
      schema: { hide: true, params: DonationParams, response: { 200: QrSvg } },
    },
    async (request, reply) => {
      const action = (await donations.findById(request.params.id))?.paymentAction;
      if (action?.type !== 'qr') {
        throw new AppError('donation-not-found', { detail: 'No QR code pays this donation.' });
      }
      return reply
        .type('image/svg+xml')
        .header('cache-control', 'private, max-age=3600')
        .send(await QRCode.toString(action.value, { type: 'svg', margin: 2 }));
    },
  );

  if (!options.simulatePayments) return;
  app.post(
    '/demo/donations/:id/simulate-payment',
    {
      config: { auth: 'client' },
      schema: { hide: true, params: DonationParams, response: { 200: SimulatedPayment } },
    },
    async (request) => {
      const donation = await donations.findById(request.params.id);
      if (!donation || donation.clientId !== request.principal?.id) {
        throw new AppError('donation-not-found');
      }
      if (donation.provider !== 'simulator' || donation.providerReference === null) {
        throw new AppError('validation-failed', {
          detail: 'The donation has no payment at the simulator yet.',
        });
      }
      const paymentStatus = await settleAtSimulator(
        config.simulator.url,
        donation.providerReference,
      );
      return { donationId: donation.id, paymentStatus };
    },
  );
};

export default demoPagePlugin;
