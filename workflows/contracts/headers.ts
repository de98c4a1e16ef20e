/** The activity header that carries the HTTP request's correlation id (`X-Request-Id`). */
export const CORRELATION_HEADER = 'galang-correlation-id';
