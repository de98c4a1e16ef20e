import { AppError } from '../errors/error-catalogue';

/** Where a wall page ends: the last row's confirmation (epoch microseconds) and donation id. */
export interface WallCursor {
  confirmedAtMicros: number;
  id: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Opaque to clients (base64url of JSON). Microseconds, not a Date: Postgres keeps them and a
 * millisecond cursor would repeat or skip rows confirmed within the same millisecond.
 */
export function encodeWallCursor(cursor: WallCursor): string {
  return Buffer.from(JSON.stringify([cursor.confirmedAtMicros, cursor.id])).toString('base64url');
}

/** Reads a cursor this API gave; anything else is a 400, never a query. */
export function decodeWallCursor(text: string): WallCursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  if (
    Array.isArray(parsed) &&
    parsed.length === 2 &&
    Number.isSafeInteger(parsed[0]) &&
    typeof parsed[1] === 'string' &&
    UUID.test(parsed[1])
  ) {
    return { confirmedAtMicros: parsed[0] as number, id: parsed[1] };
  }
  throw new AppError('validation-failed', { detail: 'querystring/cursor is not a wall cursor.' });
}
