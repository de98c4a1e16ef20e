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
