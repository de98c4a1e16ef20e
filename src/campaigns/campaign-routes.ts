import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ProgressService } from './progress-service';

const ProgressResponse = Type.Object({
  campaignId: Type.String(),
  goalAmount: Type.Integer(),
  confirmedAmount: Type.Integer(),
  donationCount: Type.Integer(),
  percent: Type.Number(),
  currency: Type.String(),
  updatedAt: Type.String({ format: 'date-time' }),
  stale: Type.Boolean(),
});

/** Public campaign reads; a campaign page polls these. */
export const campaignRoutes: FastifyPluginAsyncTypebox<{ progress: ProgressService }> = async (
  app,
  { progress },
) => {
  app.get(
    '/v1/campaigns/:id/progress',
    {
      config: { auth: 'none', problems: ['campaign-not-found'] },
      schema: {
        summary: "A campaign's confirmed total",
        params: Type.Object({ id: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }) }),
        response: { 200: ProgressResponse },
      },
    },
    async (request) => progress.get(request.params.id, request.log),
  );
};
