import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const ACCEPTABLE = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The correlation id of a request: the caller's `X-Request-Id` when it is a sane token, a new
 * UUID otherwise. It is echoed back, logged with every line, and carried into the workflow.
 */
export function requestIdOf(request: IncomingMessage): string {
  const offered = request.headers['x-request-id'];
  return typeof offered === 'string' && ACCEPTABLE.test(offered) ? offered : randomUUID();
}
