import type { EnvReader } from './env-reader';

/** The HTTP server's edges: timeouts, proxies, and who may read /metrics and /docs. */
export interface HttpConfig {
  /** The whole request, body included, must arrive within this (slow clients are cut, 408). */
  readonly requestTimeoutMs: number;
  /** A socket with no traffic for this long is closed. */
  readonly connectionTimeoutMs: number;
  /** Idle keep-alive sockets: longer than the load balancer's own idle timeout. */
  readonly keepAliveTimeoutMs: number;
  /** Fastify's `trustProxy`: whose `X-Forwarded-For` names the client (per-IP rate limits). */
  readonly trustProxy: boolean | string;
  /** When set, `/metrics` wants `Authorization: Bearer <token>`. */
  readonly metricsToken: string | undefined;
  /** The OpenAPI document and Swagger UI at /docs; off in production unless asked for. */
  readonly docsEnabled: boolean;
}

/** Requests per window and key; per client or operator key, or per IP on public reads. */
export interface RateLimitConfig {
  readonly windowMs: number;
  /** Per client key, on each client route (`POST /v1/donations`, `GET /v1/donations/:id`). */
  readonly clientMax: number;
  /** Per operator key, on each operator route. */
  readonly operatorMax: number;
  /** Per client IP, on each public read (`GET /v1/campaigns/:id/progress`). */
  readonly publicMax: number;
}

export function readHttp(reader: EnvReader, production: boolean): HttpConfig {
  return {
    requestTimeoutMs: reader.integer('HTTP_REQUEST_TIMEOUT_MS', 30_000, 100, 600_000),
    connectionTimeoutMs: reader.integer('HTTP_CONNECTION_TIMEOUT_MS', 60_000, 100, 3_600_000),
    keepAliveTimeoutMs: reader.integer('HTTP_KEEP_ALIVE_TIMEOUT_MS', 72_000, 100, 3_600_000),
    trustProxy: trustProxy(reader.optional('TRUST_PROXY')),
    metricsToken: reader.optional('METRICS_TOKEN'),
    docsEnabled: reader.boolean('DOCS_ENABLED', !production),
  };
}

export function readRateLimits(reader: EnvReader): RateLimitConfig {
  return {
    windowMs: reader.integer('RATE_LIMIT_WINDOW_MS', 60_000, 100, 86_400_000),
    clientMax: reader.integer('RATE_LIMIT_CLIENT_MAX', 60_000, 1),
    operatorMax: reader.integer('RATE_LIMIT_OPERATOR_MAX', 600, 1),
    publicMax: reader.integer('RATE_LIMIT_PUBLIC_MAX', 1_200, 1),
  };
}

/** `true`, `false`, or the proxies' addresses/CIDRs (comma-separated), as Fastify takes them. */
function trustProxy(raw: string | undefined): boolean | string {
  if (raw === undefined || raw === 'false') return false;
  return raw === 'true' ? true : raw;
}
