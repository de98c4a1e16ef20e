import { types } from 'node:util';
import pg from 'pg';
import { isTlsOrFileMisconfiguration } from '../errors/misconfiguration';

/**
 * SQLSTATE classes a wait may cure: connection exception (08), transaction rollback (40),
 * insufficient resources (53), operator intervention (57: "the database system is starting up").
 */
const PASSING_CLASSES = new Set(['08', '40', '53', '57']);

/**
 * Whether Postgres refused this process for good, as opposed to being unreachable or starting
 * (a refused connection, "the database system is starting up"), which boot waits out. Any
 * answer of the server outside the passing classes is for good: refused credentials (28), no
 * such database or no right to create it, a migration that fails; so is a TLS failure.
 */
export function isPostgresMisconfiguration(error: unknown): boolean {
  if (isTlsOrFileMisconfiguration(error)) return true;
  for (let current = error, depth = 0; types.isNativeError(current) && depth < 8; depth += 1) {
    if (current instanceof pg.DatabaseError) {
      return !PASSING_CLASSES.has((current.code ?? '').slice(0, 2));
    }
    current = current.cause;
  }
  return false;
}
