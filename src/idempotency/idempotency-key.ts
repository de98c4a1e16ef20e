import { createHash } from 'node:crypto';
import { AppError } from '../errors/error-catalogue';

/**
 * Parses the `Idempotency-Key` header. The IETF draft defines it as an RFC 8941 sf-string
 * (`"abc"`); Stripe-style clients send a bare token (`abc`). Both are accepted and mean the same
 * key. 1–255 visible ASCII characters.
 */
export function parseIdempotencyKey(header: string | string[] | undefined): string {
  if (header === undefined || header === '') throw new AppError('idempotency-key-missing');
  if (Array.isArray(header)) {
    throw new AppError('idempotency-key-invalid', { detail: 'Send exactly one Idempotency-Key.' });
  }
  const key = header.startsWith('"') ? unquoteSfString(header) : header;
  if (key === undefined || key.length < 1 || key.length > 255 || !/^[\x21-\x7e]+$/.test(key)) {
    throw new AppError('idempotency-key-invalid', {
      detail: 'The key must be 1–255 visible ASCII characters, bare or as a quoted string.',
    });
  }
  return key;
}

/** RFC 8941 §3.3.3: `"` … `"` with `\"` and `\\` as the only escapes. */
function unquoteSfString(value: string): string | undefined {
  if (value.length < 2 || !value.endsWith('"')) return undefined;
  let out = '';
  for (let i = 1; i < value.length - 1; i++) {
    const ch = value.charAt(i);
    if (ch === '\\') {
      const next = value.charAt(++i);
      if (next === '"' || next === '\\') out += next;
      else return undefined;
    } else if (ch === '"') {
      return undefined;
    } else {
      out += ch;
    }
  }
  return out;
}

/** What an idempotency record is scoped to: one client's key on one route. */
export interface IdempotencyScope {
  clientId: string;
  method: string;
  route: string;
  key: string;
}

/**
 * The LMDB key of a scope. NUL cannot occur in any part, so the join is unambiguous. Computed
 * on every idempotent request: a template, not an array join.
 */
export function scopedKey(scope: IdempotencyScope): string {
  return `${scope.clientId}\u0000${scope.method}\u0000${scope.route}\u0000${scope.key}`;
}

/**
 * A UUID derived from the scoped key, so every edge process, every retry and every crash
 * recovery names the same donation (and so the same workflow) for the same client request.
 * Version 8 (RFC 9562: custom), built from SHA-256.
 */
export function deriveUuid(scope: IdempotencyScope): string {
  const bytes = createHash('sha256').update(scopedKey(scope)).digest().subarray(0, 16);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x80;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
