import { ProviderUnavailable } from './payment-provider';

/** A provider answered, but with an error no retry will change (4xx other than 408/429). */
export class ProviderRejected extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`Provider rejected the request with HTTP ${status}`);
    this.name = 'ProviderRejected';
  }
}

/**
 * JSON over HTTP for provider clients, with the retry classification every adapter shares:
 * network errors, timeouts, 408, 429 and 5xx are {@link ProviderUnavailable} (Temporal retries);
 * other 4xx are {@link ProviderRejected} (final).
 */
export async function requestJson<T>(
  url: string,
  init: {
    method: string;
    headers?: Record<string, string>;
    /** Sent as JSON. */
    body?: unknown;
    /** Sent as is, with the content type the caller sets (Stripe takes form encoding). */
    rawBody?: string | undefined;
    timeoutMs?: number;
  },
): Promise<T> {
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, {
      method: init.method,
      headers: {
        accept: 'application/json',
        ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...init.headers,
      },
      body: init.rawBody ?? (init.body === undefined ? null : JSON.stringify(init.body)),
      signal: AbortSignal.timeout(init.timeoutMs ?? 10_000),
    });
    // Inside the try: a connection reset or the timeout can strike while the body arrives.
    text = await response.text();
  } catch (error) {
    throw new ProviderUnavailable(`${init.method} ${url} failed: ${String(error)}`, {
      cause: error,
    });
  }
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // Keep the text: an HTML error page from a proxy is still worth logging.
  }
  if (response.ok) return body as T;
  if (response.status === 408 || response.status === 429 || response.status >= 500) {
    throw new ProviderUnavailable(`${init.method} ${url} answered ${response.status}`);
  }
  throw new ProviderRejected(response.status, body);
}
