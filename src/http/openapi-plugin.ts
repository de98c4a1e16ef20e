import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import helmet from '@fastify/helmet';
import rateLimit from '@fastify/rate-limit';
import type { RateLimitConfig } from '../config/http-config';
import { publicRateLimit } from '../security/rate-limits';
import { PAGE_HELMET_OPTIONS } from '../security/security-headers';
import type { FastifyPluginAsync, FastifySchema, RouteOptions } from 'fastify';
import type { ErrorCode } from '../errors/error-catalogue';
import { problemResponses } from './openapi-problems';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Route-specific problems it may answer, for the OpenAPI document (common ones are added). */
    problems?: ErrorCode[];
  }
}

/** Problems every route may answer, whatever it does. */
const COMMON: ErrorCode[] = [
  'validation-failed',
  'not-found',
  'payload-too-large',
  'unsupported-media-type',
  'rate-limited',
  'internal',
  'service-unavailable',
];
const AUTHENTICATED: ErrorCode[] = ['unauthorized', 'forbidden'];
const IDEMPOTENT: ErrorCode[] = [
  'idempotency-key-missing',
  'idempotency-key-invalid',
  'idempotency-key-in-use',
  'idempotency-key-mismatch',
];

const SECURITY = {
  none: [],
  client: [{ apiKey: [] }],
  operator: [{ operatorKey: [] }],
  'client-or-operator': [{ apiKey: [] }, { operatorKey: [] }],
  codec: [{ codecKey: [] }],
} as const;

/** What a route's schema becomes in the document: security, headers and every problem. */
function documented(schema: FastifySchema | undefined, route: RouteOptions): FastifySchema {
  const config = route.config ?? {};
  const auth = config.auth ?? 'none';
  const codes = [
    ...COMMON,
    ...(auth === 'none' ? [] : AUTHENTICATED),
    ...(config.idempotent ? IDEMPOTENT : []),
    ...(config.problems ?? []),
  ];
  const success = schema?.response ?? { 200: { description: 'OK' } };
  return {
    ...schema,
    security: [...SECURITY[auth]],
    response: { ...success, ...problemResponses(codes) },
  };
}

/**
 * The OpenAPI document of every route, built from the routes' own TypeBox schemas, at
 * `/docs/json` (and `/docs/yaml`), with Swagger UI at `/docs`. Registered before the auth
 * plugin, so the documentation routes carry no key check: they are public on purpose, limited
 * per client IP like every public read (`limits.publicMax`).
 */
const openapiPlugin: FastifyPluginAsync<{ publicUrl: string; limits: RateLimitConfig }> = async (
  app,
  options,
) => {
  const spec: FastifyDynamicSwaggerOptions = {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'galang',
        version: '0.1.0',
        description:
          'Donations taken, charged and counted exactly once. Errors are RFC 9457 problem documents (`application/problem+json`) with a stable `code`; every code is listed with an example under the responses of the routes that may answer it.',
      },
      servers: [{ url: options.publicUrl }],
      components: {
        securitySchemes: {
          apiKey: {
            type: 'http',
            scheme: 'bearer',
            description: "A client's API key (`API_KEYS`): `Authorization: Bearer <secret>`",
          },
          operatorKey: {
            type: 'http',
            scheme: 'bearer',
            description: "An operator's key (`OPERATOR_KEYS`): `Authorization: Bearer <secret>`",
          },
          codecKey: {
            type: 'http',
            scheme: 'bearer',
            description:
              "A key of the codec role (`CODEC_KEYS`), held by the Web UI's proxy: `Authorization: Bearer <secret>`",
          },
        },
      },
    },
    transform: ({ schema, url, route }) => ({ schema: documented(schema, route), url }),
  };
  await app.register(swagger, spec);
  // Helmet's page headers, encapsulated: the API's routes keep theirs. Swagger UI replaces
  // Helmet's Content-Security-Policy with its own, which lets its scripts run.
  await app.register(async (docs) => {
    await docs.register(rateLimit, publicRateLimit(options.limits));
    await docs.register(helmet, PAGE_HELMET_OPTIONS);
    await docs.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });
  });
};

export default fp(openapiPlugin, { name: 'openapi' });
