import { hash } from 'node:crypto';
import type { FastifyBodyParser, FastifyRequest } from 'fastify';
import type { IdempotencyRecord } from './idempotency-record';

/** What the idempotency layer keeps of a request's JSON body; see `IdempotencyContext`. */
export interface RequestBytes {
  /** The body as received; undefined when the request had none. */
  rawBody: string | undefined;
  /** Whether `rawBody` still has to be parsed into `request.body`. */
  unparsed: boolean;
  /** SHA-256 of `rawBody`, once computed. */
  rawDigest: string | undefined;
}

/** Fastify's own JSON parser, as `getDefaultJsonParser` returns it (callback form). */
export type JsonParser = FastifyBodyParser<string>;

/** Bodies larger than this are not remembered beside a record; they are hashed on every retry. */
const REMEMBERED_BODY_MAX = 4096;

/** SHA-256 of the exact body bytes, computed at most once per request. */
export function rawDigestOf(bytes: RequestBytes): string {
  bytes.rawDigest ??= hash('sha256', bytes.rawBody ?? '', 'base64url');
  return bytes.rawDigest;
}

/**
 * Parses a body whose parsing was deferred, with Fastify's own JSON parser (prototype poisoning
 * refused), so a malformed body fails exactly as it would have in the content-type parser.
 */
export function parseDeferredBody(
  request: FastifyRequest,
  bytes: RequestBytes,
  parseJson: JsonParser,
): void {
  if (!bytes.unparsed) return;
  bytes.unparsed = false;
  // The default parser answers synchronously; its callback form is all Fastify exposes.
  const outcome: { error: Error | null } = { error: null };
  void parseJson(request, bytes.rawBody ?? '', (error, body) => {
    outcome.error = error;
    request.body = body;
  });
  if (outcome.error) throw outcome.error;
}

/**
 * Which body bytes are known to match a COMPLETED record, so a retry storm on one key costs a
 * string comparison per request instead of a SHA-256 of its body.
 *
 * Keyed by the record object: the store hands out the same object for a COMPLETED record for as
 * long as it keeps it, and the entry goes with the record when the store lets it go. Only this
 * process's memory holds the bytes; the store itself keeps digests, never bodies.
 */
export class KnownBodies {
  private readonly bodies = new WeakMap<IdempotencyRecord, string>();

  /** Whether the request's bytes are exactly those of the record's original request. */
  matches(record: IdempotencyRecord, bytes: RequestBytes): boolean {
    const raw = bytes.rawBody;
    if (raw === undefined) return false;
    if (this.bodies.get(record) === raw) return true;
    if (record.rawDigest !== rawDigestOf(bytes)) return false;
    if (record.status === 'COMPLETED' && raw.length <= REMEMBERED_BODY_MAX) {
      this.bodies.set(record, raw);
    }
    return true;
  }
}
