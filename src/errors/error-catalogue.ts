/**
 * Every error galang answers with, in one place. The code is the last path segment of the RFC 9457
 * `type`, so integrators can switch on it; the title never changes for a code.
 */
export const errorCatalogue = {
  'validation-failed': { status: 400, title: 'The request is not valid' },
  'idempotency-key-missing': { status: 400, title: 'The Idempotency-Key header is required' },
  'idempotency-key-invalid': { status: 400, title: 'The Idempotency-Key header is malformed' },
  unauthorized: { status: 401, title: 'Missing or unknown credentials' },
  'webhook-signature-invalid': { status: 401, title: 'The webhook signature does not verify' },
  'payment-declined': { status: 402, title: 'The payment was declined' },
  forbidden: { status: 403, title: 'These credentials may not do this' },
  'not-found': { status: 404, title: 'No such resource' },
  'campaign-not-found': { status: 404, title: 'No such campaign' },
  'donation-not-found': { status: 404, title: 'No such donation' },
  'receipt-not-found': { status: 404, title: 'No such receipt, or the link is not valid' },
  'pledge-not-found': { status: 404, title: 'No such pledge, or the link is not valid' },
  'provider-unknown': { status: 404, title: 'No such payment provider' },
  'idempotency-key-in-use': {
    status: 409,
    title: 'A request with this Idempotency-Key is still being processed',
  },
  'campaign-exists': { status: 409, title: 'A campaign with this id exists' },
  'payload-too-large': { status: 413, title: 'The request body is too large' },
  'unsupported-media-type': { status: 415, title: 'The request body must be JSON' },
  'idempotency-key-mismatch': {
    status: 422,
    title: 'This Idempotency-Key was used with a different request',
  },
  'campaign-closed': { status: 422, title: 'The campaign does not accept donations' },
  'donation-not-refundable': {
    status: 422,
    title: 'Only a confirmed, not yet refunded donation can be refunded',
  },
  'currency-mismatch': { status: 422, title: "The currency differs from the campaign's" },
  'provider-closing': { status: 422, title: 'The payment provider takes no new donations' },
  'pledge-cancelled': { status: 422, title: 'The pledge is cancelled' },
  'unsupported-currency': { status: 422, title: 'The currency is not supported' },
  'rate-limited': { status: 429, title: 'Too many requests' },
  internal: { status: 500, title: 'Internal error' },
  'service-unavailable': { status: 503, title: 'A dependency is unavailable; retry later' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof errorCatalogue;

/** Base of every problem `type`; a relative reference resolved against the API's own URL. */
export const PROBLEM_TYPE_BASE = '/problems/';

export interface AppErrorOptions {
  detail?: string;
  /** Seconds, for 409/429/503 answers: sent as `Retry-After`. */
  retryAfter?: number;
  /** Extension members of the problem document (RFC 9457 §3.2). */
  extensions?: Record<string, unknown>;
  cause?: unknown;
}

/** An error with a catalogued code; the error handler turns it into problem+json. */
export class AppError extends Error {
  readonly status: number;
  readonly title: string;
  readonly detail: string | undefined;
  readonly retryAfter: number | undefined;
  readonly extensions: Record<string, unknown> | undefined;

  constructor(
    readonly code: ErrorCode,
    options: AppErrorOptions = {},
  ) {
    const entry = errorCatalogue[code];
    super(options.detail ?? entry.title, { cause: options.cause });
    this.name = 'AppError';
    this.status = entry.status;
    this.title = entry.title;
    this.detail = options.detail;
    this.retryAfter = options.retryAfter;
    this.extensions = options.extensions;
  }
}
