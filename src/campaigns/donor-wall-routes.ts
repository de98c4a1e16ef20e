import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { donationSubject } from '../audit/audit-entry';
import { DonationParams } from '../donations/donation-schemas';
import { CampaignParams } from './campaign-schemas';
import { DEFAULT_WALL_LIMIT, WALL_CACHE_CONTROL } from './donor-wall-service';
import type { DonorWallService } from './donor-wall-service';
import { MessageHidden, WallQuery, WallResponse } from './donor-wall-schemas';
import { matchesEtag } from './progress-answer';

/** The public donor wall and the operators' hiding of a message on it. */
export const donorWallRoutes: FastifyPluginAsyncTypebox<{ wall: DonorWallService }> = async (
  app,
  { wall },
) => {
  app.get(
    '/v1/campaigns/:id/donations',
    {
      config: { auth: 'none', problems: ['campaign-not-found'] },
      // Polled by campaign pages like the progress: no access log line per read.
      logLevel: 'warn',
      schema: {
        summary: "A campaign's donor wall",
        description:
          'Confirmed donations, newest first, keyset-paginated (`next` → `cursor`). Public ' +
          'names only ("Anonymous" when the donor asked), links removed from the text, no ' +
          'amounts when the campaign hides them. Cached; answers carry an ETag (send ' +
          'If-None-Match for a 304) and Cache-Control.',
        params: CampaignParams,
        querystring: WallQuery,
        response: { 200: WallResponse, 304: { type: 'null', description: 'Not modified' } },
      },
    },
    async (request, reply) => {
      const { limit, cursor } = request.query;
      const page = await wall.page(
        request.params.id,
        limit === undefined ? DEFAULT_WALL_LIMIT : Number(limit),
        cursor,
      );
      reply.header('etag', page.etag).header('cache-control', WALL_CACHE_CONTROL);
      if (matchesEtag(request.headers['if-none-match'], page.etag)) return reply.code(304).send();
      // Serialized once per page and generation, not per request.
      return reply.type('application/json; charset=utf-8').send(page.body);
    },
  );

  app.post(
    '/v1/donations/:id/message/hide',
    {
      config: {
        auth: 'operator',
        audit: { action: 'message-hide', subject: donationSubject },
        problems: ['donation-not-found'],
      },
      schema: {
        summary: "Hide a donation's message from the donor wall (operators)",
        description:
          'The wall shows no message for it from then on; its cached pages are dropped. ' +
          'Hiding twice is harmless.',
        params: DonationParams,
        response: { 200: MessageHidden },
      },
    },
    async (request) => wall.hideMessage(request.params.id),
  );
};
