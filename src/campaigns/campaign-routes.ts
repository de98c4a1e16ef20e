import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuditSubject } from '../audit/audit-entry';
import type { CampaignService } from './campaign-service';
import {
  CampaignParams,
  CampaignView,
  CreateCampaignBody,
  ProgressResponse,
} from './campaign-schemas';
import { matchesEtag } from './progress-answer';
import type { ProgressAnswer } from './progress-answer';
import type { ProgressService } from './progress-service';

/** Which campaign an operator acts on: the path's, or the one a create names (none: generated). */
function campaignSubject(request: FastifyRequest): AuditSubject {
  const params = request.params as { id?: string } | undefined;
  const body = request.body as { id?: string } | undefined;
  return { campaignId: params?.id ?? body?.id };
}

/** Public progress reads (a campaign page polls them) and the operators' campaign endpoints. */
export const campaignRoutes: FastifyPluginAsyncTypebox<{
  progress: ProgressService;
  campaigns: CampaignService;
}> = async (app, { progress, campaigns }) => {
  app.get(
    '/v1/campaigns/:id/progress',
    {
      config: { auth: 'none', problems: ['campaign-not-found'] },
      // A campaign page polls this thousands of times a second: no access log line per read
      // (rate and latency are in the per-route metrics); warnings and errors still log.
      logLevel: 'warn',
      schema: {
        summary: "A campaign's confirmed total",
        description:
          'Cached; answers carry an ETag (send If-None-Match for a 304) and Cache-Control.',
        params: CampaignParams,
        response: { 200: ProgressResponse, 304: { type: 'null', description: 'Not modified' } },
      },
    },
    async (request, reply) => sendProgress(request, reply, await progress.get(request.params.id)),
  );

  app.post(
    '/v1/campaigns',
    {
      config: {
        auth: 'operator',
        audit: { action: 'campaign-create', subject: campaignSubject },
        idempotent: true,
        problems: ['campaign-exists', 'unsupported-currency'],
      },
      schema: {
        summary: 'Create a campaign (operators)',
        body: CreateCampaignBody,
        response: { 200: CampaignView, 201: CampaignView },
      },
    },
    async (request, reply) => {
      const { campaign, created } = await campaigns.create(request.body);
      return reply
        .code(created ? 201 : 200)
        .header('location', `/v1/campaigns/${campaign.id}`)
        .send(campaign);
    },
  );

  app.get(
    '/v1/campaigns/:id',
    {
      config: {
        auth: 'operator',
        audit: { action: 'campaign-read', subject: campaignSubject },
        problems: ['campaign-not-found'],
      },
      schema: {
        summary: 'A campaign and its totals, read from Postgres (operators)',
        params: CampaignParams,
        response: { 200: CampaignView },
      },
    },
    async (request) => campaigns.get(request.params.id),
  );

  app.post(
    '/v1/campaigns/:id/close',
    {
      config: {
        auth: 'operator',
        audit: { action: 'campaign-close', subject: campaignSubject },
        problems: ['campaign-not-found'],
      },
      schema: {
        summary: 'Close a campaign to new donations (operators)',
        description: 'Donations already started still settle. Closing twice is harmless.',
        params: CampaignParams,
        response: { 200: CampaignView },
      },
    },
    async (request) => campaigns.close(request.params.id),
  );
};

/** Sends a progress answer, or a 304 when the client already holds this version. */
function sendProgress(
  request: FastifyRequest,
  reply: FastifyReply,
  answer: ProgressAnswer,
): FastifyReply {
  reply.header('etag', answer.etag).header('cache-control', answer.cacheControl);
  if (matchesEtag(request.headers['if-none-match'], answer.etag)) return reply.code(304).send();
  // Serialized once per value, not per request.
  return reply.type('application/json; charset=utf-8').send(answer.body);
}
