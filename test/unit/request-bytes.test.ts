import { hash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { CompletedRecord } from '../../src/idempotency/idempotency-record';
import { KnownBodies, parseDeferredBody, rawDigestOf } from '../../src/idempotency/request-bytes';
import type { JsonParser, RequestBytes } from '../../src/idempotency/request-bytes';

const digest = (raw: string) => hash('sha256', raw, 'base64url');

function completed(raw: string): CompletedRecord {
  return {
    status: 'COMPLETED',
    fingerprint: 'unused',
    rawDigest: digest(raw),
    owner: { pid: 1, claimId: 'c' },
    createdAt: 0,
    expiresAt: Number.MAX_SAFE_INTEGER,
    response: { statusCode: 202, headers: {}, body: '{}' },
  };
}

/** Bytes whose digest is given, as a request that already computed it would hold. */
const bytes = (rawBody: string | undefined, rawDigest?: string): RequestBytes => ({
  rawBody,
  unparsed: true,
  rawDigest,
});

describe('request bytes', () => {
  it('digests the raw body once', () => {
    const b = bytes('{"a":1}');
    expect(rawDigestOf(b)).toBe(digest('{"a":1}'));
    b.rawBody = 'changed';
    expect(rawDigestOf(b)).toBe(digest('{"a":1}'));
  });

  it('matches a record by the digest of the bytes, then remembers the bytes', () => {
    const known = new KnownBodies();
    const record = completed('{"a":1}');
    expect(known.matches(record, bytes('{"a": 1}'))).toBe(false);
    expect(known.matches(record, bytes(undefined))).toBe(false);
    expect(known.matches(record, bytes('{"a":1}'))).toBe(true);
    // Remembered: the same bytes match again without their digest being looked at.
    expect(known.matches(record, bytes('{"a":1}', 'not-the-digest'))).toBe(true);
    expect(known.matches(completed('{"a":1}'), bytes('{"a":1}', 'not-the-digest'))).toBe(false);
  });

  it('does not remember large bodies or records still in flight', () => {
    const known = new KnownBodies();
    const large = `{"pad":"${'x'.repeat(5000)}"}`;
    const record = completed(large);
    expect(known.matches(record, bytes(large))).toBe(true);
    expect(known.matches(record, bytes(large, 'not-the-digest'))).toBe(false);
    const inFlight = { ...completed('{}'), status: 'IN_FLIGHT' as const, leaseUntil: 0 };
    expect(known.matches(inFlight, bytes('{}'))).toBe(true);
    expect(known.matches(inFlight, bytes('{}', 'not-the-digest'))).toBe(false);
  });

  it('parses a deferred body once, and fails as the parser fails', () => {
    const parser: JsonParser = (_request, body, done) => {
      try {
        done(null, JSON.parse(body));
      } catch (error) {
        done(error as Error);
      }
    };
    const request = { body: undefined } as FastifyRequest;
    const b = bytes('{"a":1}');
    parseDeferredBody(request, b, parser);
    expect(request.body).toEqual({ a: 1 });
    request.body = 'kept';
    parseDeferredBody(request, b, parser);
    expect(request.body).toBe('kept');
    expect(() => {
      parseDeferredBody(request, bytes('{"a":'), parser);
    }).toThrow(SyntaxError);
  });
});
