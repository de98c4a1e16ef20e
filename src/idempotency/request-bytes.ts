import { hash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/** What the idempotency layer keeps of a request's JSON body; see `IdempotencyContext`. */
export interface RequestBytes {
  /** The body as received; undefined when the request had none. */
  rawBody: string | undefined;
  /** SHA-256 of `rawBody`, once computed. */
  rawDigest: string | undefined;
}

/** SHA-256 of the exact body bytes, computed at most once per request. */
export function rawDigestOf(bytes: RequestBytes): string {
  bytes.rawDigest ??= hash('sha256', bytes.rawBody ?? '', 'base64url');
  return bytes.rawDigest;
}

/**
 * Parses JSON bodies with Fastify's own parser (prototype poisoning refused, a malformed body a
 * 400) from their text, and keeps that text where `bytesOf` says, so a retry can be recognized
 * by its exact bytes. A documented content-type parser (`parseAs: 'string'`).
 */
export function keepJsonBodies(
  app: FastifyInstance,
  bytesOf: (request: FastifyRequest) => RequestBytes | undefined,
): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const bytes = bytesOf(request);
    if (bytes) bytes.rawBody = body as string;
    void parseJson(request, body as string, done);
  });
}
