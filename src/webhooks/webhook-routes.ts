import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError } from '../errors/error-catalogue';
import { IntakeGate } from './intake-gate';
import type { WebhookIntake } from './webhook-intake';

export interface WebhookRouteOptions {
  intake: WebhookIntake;
  /** Bytes each provider's route reads at most (src/config/webhook-config.ts). */
  bodyLimits: Readonly<Record<string, number>>;
  /** Webhook requests this process holds at once; past it 503 with `Retry-After`. */
  maxInFlight: number;
}

/** A name no provider has is answered 404 whatever it sends: a kilobyte is plenty to read. */
const UNKNOWN_PROVIDER_BODY_LIMIT = 1024;
/** Providers retry a 503 on their own schedule; this is only a hint for those that read it. */
const BUSY_RETRY_AFTER_SECONDS = 5;

const Received = Type.Object({ received: Type.Boolean(), outcome: Type.String() });

/**
 * `POST /v1/webhooks/:provider`. Registered in its own encapsulated context whose only body
 * parser keeps the raw bytes: signatures are verified over exactly what the provider sent. Each
 * provider has a route of its own so Fastify reads no more than that provider's body limit, and
 * every request holds a place in the process's {@link IntakeGate} until it is answered.
 */
export const webhookRoutes: FastifyPluginAsyncTypebox<WebhookRouteOptions> = async (
  app,
  { intake, bodyLimits, maxInFlight },
) => {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => {
    done(null, body);
  });

  const gate = new IntakeGate(maxInFlight);
  /** Hooks of one route; `provider` labels what they count (a path parameter is not read yet). */
  const bounded = (provider: string, bodyLimit: number) =>
    ({
      bodyLimit,
      // Before the body is read: a refused request costs no buffer.
      onRequest: async (_request: FastifyRequest, reply: FastifyReply) => {
        const release = gate.tryEnter();
        if (!release) {
          intake.refused(provider, 'busy');
          throw new AppError('service-unavailable', {
            retryAfter: BUSY_RETRY_AFTER_SECONDS,
            detail: 'Too many notifications are being received at once; retry later.',
          });
        }
        // Emitted once the answer is sent or the connection is gone, whichever comes.
        reply.raw.once('close', release);
      },
      onError: async (_request: FastifyRequest, _reply: FastifyReply, error: Error) => {
        if ((error as { code?: string }).code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
          intake.refused(provider, 'too-large');
        }
      },
    }) satisfies RouteShorthandOptions;

  const receive = async (provider: string, request: FastifyRequest, reply: FastifyReply) => {
    const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const { outcome, correlationId } = await intake.receive(
      provider,
      body,
      request.headers,
      request.log,
    );
    // The request's remaining lines ("request completed") name the donation's request too.
    if (correlationId) request.log = reply.log = request.log.child({ correlationId });
    return { received: true, outcome };
  };
  const config = {
    auth: 'none',
    problems: ['provider-unknown', 'webhook-signature-invalid'],
  } as const;

  for (const [provider, bodyLimit] of Object.entries(bodyLimits)) {
    app.post(
      `/v1/webhooks/${provider}`,
      {
        ...bounded(provider, bodyLimit),
        config: { ...config, problems: [...config.problems] },
        // The documented route below describes it; this one only carries its body limit.
        schema: { hide: true, response: { 200: Received } },
      },
      (request, reply) => receive(provider, request, reply),
    );
  }
  app.post(
    '/v1/webhooks/:provider',
    {
      ...bounded('unknown', UNKNOWN_PROVIDER_BODY_LIMIT),
      config: { ...config, problems: [...config.problems] },
      schema: {
        summary: 'Receive a payment provider notification',
        description:
          "Each provider has its own body limit (413 past it); past the intake's concurrency " +
          'bound the answer is 503 with Retry-After.',
        params: Type.Object({ provider: Type.String({ pattern: '^[a-z0-9-]{1,32}$' }) }),
        response: { 200: Received },
      },
    },
    (request, reply) => receive(request.params.provider, request, reply),
  );
};
