import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { WebhookIntake } from './webhook-intake';

const WEBHOOK_BODY_LIMIT = 256 * 1024;

/**
 * `POST /v1/webhooks/:provider`. Registered in its own encapsulated context whose only body
 * parser keeps the raw bytes: signatures are verified over exactly what the provider sent.
 */
export const webhookRoutes: FastifyPluginAsyncTypebox<{ intake: WebhookIntake }> = async (
  app,
  { intake },
) => {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    '*',
    { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT },
    (_request, body, done) => {
      done(null, body);
    },
  );

  app.post(
    '/v1/webhooks/:provider',
    {
      config: { auth: 'none', problems: ['provider-unknown', 'webhook-signature-invalid'] },
      schema: {
        summary: 'Receive a payment provider notification',
        params: Type.Object({ provider: Type.String({ pattern: '^[a-z0-9-]{1,32}$' }) }),
        response: { 200: Type.Object({ received: Type.Boolean(), outcome: Type.String() }) },
      },
    },
    async (request, reply) => {
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const { outcome, correlationId } = await intake.receive(
        request.params.provider,
        body,
        request.headers,
        request.log,
      );
      // The request's remaining lines ("request completed") name the donation's request too.
      if (correlationId) request.log = reply.log = request.log.child({ correlationId });
      return { received: true, outcome };
    },
  );
};
