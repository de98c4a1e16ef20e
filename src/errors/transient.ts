/**
 * Whether an error means "a dependency is unreachable right now" rather than "this request is
 * wrong": such errors become 503 with Retry-After, never 500, and are never cached.
 */
export function isTransientInfrastructureError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH'].includes(code)) {
      return true;
    }
    // Postgres: connection exceptions (08), insufficient resources (53), operator intervention (57).
    if (/^(08|53|57)[0-9A-Z]{3}$/.test(code)) return true;
  }
  const message = error instanceof Error ? error.message : '';
  return /Connection terminated|timeout exceeded when trying to connect|Connection is closed|UNAVAILABLE|DEADLINE_EXCEEDED/i.test(
    message,
  );
}
