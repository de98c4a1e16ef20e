import { types } from 'node:util';
import { isGrpcServiceError } from '@temporalio/client';
import pg from 'pg';
import { DatabaseUnavailableError } from '../db/database-unavailable';

/** Node's socket errors: the peer refused, dropped or never answered the connection. */
const NODE_CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
]);

/**
 * SQLSTATE classes: connection exception (08), transaction rollback (40: serialization failure,
 * deadlock), insufficient resources (53), operator intervention (57).
 */
const POSTGRES_TRANSIENT_CLASSES = new Set(['08', '40', '53', '57']);

/**
 * gRPC status codes (Temporal's transport): the server did not answer in time, is rate-limiting
 * (a spike), or is away.
 */
const GRPC_DEADLINE_EXCEEDED = 4;
const GRPC_RESOURCE_EXHAUSTED = 8;
const GRPC_UNAVAILABLE = 14;

/** ioredis' error for a command given up after its reconnect attempts (`maxRetriesPerRequest`). */
const REDIS_GAVE_UP = 'MaxRetriesPerRequestError';

function isTransientItself(error: Error): boolean {
  if (error instanceof DatabaseUnavailableError) return true;
  if (error instanceof pg.DatabaseError) {
    return POSTGRES_TRANSIENT_CLASSES.has(error.code?.slice(0, 2) ?? '');
  }
  if (isGrpcServiceError(error)) {
    const code: number = error.code;
    return [GRPC_DEADLINE_EXCEEDED, GRPC_RESOURCE_EXHAUSTED, GRPC_UNAVAILABLE].includes(code);
  }
  if (error.name === REDIS_GAVE_UP) return true;
  const { code } = error as NodeJS.ErrnoException;
  return typeof code === 'string' && NODE_CONNECTION_CODES.has(code);
}

/**
 * Whether an error means "a dependency is unreachable right now" rather than "this request is
 * wrong": such errors become 503 with Retry-After, never 500, and are never cached. Decided by
 * the error's class and code, along its `cause` chain (Temporal's ServiceError wraps gRPC's).
 */
export function isTransientInfrastructureError(error: unknown): boolean {
  // isNativeError: Node's own errors may come from another realm (a VM context, Jest's sandbox).
  for (let current = error, depth = 0; types.isNativeError(current) && depth < 8; depth += 1) {
    if (isTransientItself(current)) return true;
    current = current.cause;
  }
  return false;
}
