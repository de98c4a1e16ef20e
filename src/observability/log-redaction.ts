import type { redactOptions } from 'pino';

/**
 * What pino blanks in every line galang writes: credentials (bearer keys, cookies) and donors'
 * e-mail addresses, at the top of a logged object or up to three levels into it (`err.input`,
 * `donation.donor.email`, a request's headers).
 */
export const logRedaction: redactOptions = {
  paths: [
    'authorization',
    'cookie',
    'headers.authorization',
    'headers.cookie',
    '*.headers.authorization',
    '*.headers.cookie',
    '*.headers["set-cookie"]',
    'email',
    '*.email',
    '*.*.email',
    '*.*.*.email',
  ],
  censor: '[redacted]',
};

/** What a request's log lines say of it: Fastify's default fields, link tokens blanked. */
export function logRequest(request: {
  method: string;
  url: string;
  hostname?: string;
  ip?: string;
  socket?: { remotePort?: number | undefined } | undefined;
}) {
  return {
    method: request.method,
    // A receipt's link carries its capability in `token=`: a log reader must not get it.
    url: request.url.replace(/([?&]token=)[^&#]*/g, '$1[redacted]'),
    hostname: request.hostname,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}
