import net from 'node:net';
import type { EnvReader } from './env-reader';

/** The HTTP server's edges: timeouts, proxies, and who may read /metrics and /docs. */
export interface HttpConfig {
  /** The whole request, body included, must arrive within this (slow clients are cut, 408). */
  readonly requestTimeoutMs: number;
  /** A socket with no traffic for this long is closed. */
  readonly connectionTimeoutMs: number;
  /** Idle keep-alive sockets: longer than the load balancer's own idle timeout. */
  readonly keepAliveTimeoutMs: number;
  /**
   * Fastify's `trustProxy`: the load balancers (addresses, CIDRs) whose `X-Forwarded-For` names
   * the client, for per-IP rate limits; `true` (any sender) only outside production.
   */
  readonly trustProxy: boolean | readonly string[];
  /** When set (always in production), `/metrics` wants `Authorization: Bearer <token>`. */
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
  /** Per client IP, on each public read (the progress, `/readyz`, `/metrics`, pages, `/docs`). */
  readonly publicMax: number;
  /** Per client IP, answers of 401 (unknown keys, webhook signatures) before it is refused. */
  readonly failedAuthMax: number;
}

export function readHttp(reader: EnvReader, problems: string[], production: boolean): HttpConfig {
  const metricsToken = reader.optional('METRICS_TOKEN');
  if (production && metricsToken === undefined) {
    problems.push(
      'METRICS_TOKEN is required in production: /metrics of the API and the worker answer only Authorization: Bearer <METRICS_TOKEN>',
    );
  }
  return {
    requestTimeoutMs: reader.integer('HTTP_REQUEST_TIMEOUT_MS', 30_000, 100, 600_000),
    connectionTimeoutMs: reader.integer('HTTP_CONNECTION_TIMEOUT_MS', 60_000, 100, 3_600_000),
    keepAliveTimeoutMs: reader.integer('HTTP_KEEP_ALIVE_TIMEOUT_MS', 72_000, 100, 3_600_000),
    trustProxy: trustProxy(reader.optional('TRUST_PROXY'), problems, production),
    metricsToken,
    docsEnabled: reader.boolean('DOCS_ENABLED', !production),
  };
}

export function readRateLimits(reader: EnvReader): RateLimitConfig {
  return {
    windowMs: reader.integer('RATE_LIMIT_WINDOW_MS', 60_000, 100, 86_400_000),
    clientMax: reader.integer('RATE_LIMIT_CLIENT_MAX', 60_000, 1),
    operatorMax: reader.integer('RATE_LIMIT_OPERATOR_MAX', 600, 1),
    publicMax: reader.integer('RATE_LIMIT_PUBLIC_MAX', 1_200, 1),
    failedAuthMax: reader.integer('RATE_LIMIT_FAILED_AUTH_MAX', 30, 1),
  };
}

/**
 * `false`, or the proxies' addresses and CIDRs (comma-separated), as Fastify takes them. `true`
 * trusts whoever sends the header, so a client can name any address and spend another's
 * per-IP budget, or escape its own: a convenience for development only.
 */
function trustProxy(
  raw: string | undefined,
  problems: string[],
  production: boolean,
): boolean | readonly string[] {
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') {
    if (production) {
      problems.push(
        'TRUST_PROXY=true believes any X-Forwarded-For, so any client picks its own address: list the load balancer addresses or CIDRs instead',
      );
    }
    return true;
  }
  const proxies = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  for (const proxy of proxies.filter((entry) => !isAddressOrCidr(entry))) {
    problems.push(`TRUST_PROXY: "${proxy}" is no IP address or CIDR`);
  }
  return proxies;
}

function isAddressOrCidr(entry: string): boolean {
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = net.isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}
