import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * The loopback HTTP server every provider stand-in runs on: routes by method and path pattern,
 * a parsed body (JSON or form), and per-call fault knobs (5xx, 429, hang) that act before the
 * route runs, so a faulted call changes no state, as a proxy or rate limiter in front would.
 */
export interface StandinRequest {
  method: string;
  url: URL;
  headers: IncomingMessage['headers'];
  rawBody: string;
  /** JSON bodies parsed; form bodies (Stripe) as a flat record of their keys. */
  body: Record<string, unknown>;
}

export interface StandinResponse {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface Route {
  method: string;
  /** Matched against the path only (no query). */
  path: RegExp;
  handle: (request: StandinRequest, params: string[]) => StandinResponse | Promise<StandinResponse>;
}

/** A fault for one call: an HTTP answer instead of the route's, or no answer at all. */
export type Fault = { kind: 'status'; status: number; body?: unknown } | { kind: 'hang' };

/**
 * Queued faults, each for the next call that matches `METHOD /path-prefix` (or `*`), taken in
 * order: `faults.add('POST /v1/refunds', { kind: 'status', status: 503 })`.
 */
export class Faults {
  private readonly queue: { match: string; fault: Fault }[] = [];

  add(match: string, ...faults: Fault[]): void {
    for (const fault of faults) this.queue.push({ match, fault });
  }

  take(method: string, path: string): Fault | undefined {
    const index = this.queue.findIndex(({ match }) => {
      if (match === '*') return true;
      const [m, prefix = ''] = match.split(' ');
      return m === method && path.startsWith(prefix);
    });
    if (index < 0) return undefined;
    return this.queue.splice(index, 1)[0]?.fault;
  }

  get pending(): number {
    return this.queue.length;
  }
}

export interface Loopback {
  url: string;
  port: number;
  /** Every call that reached the server, faulted or not, in arrival order. */
  calls: { method: string; path: string; status: number | 'hang' }[];
  close: () => Promise<void>;
}

function parseForm(raw: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(raw)) out[key] = value;
  return out;
}

function parseBody(raw: string, type: string | undefined): Record<string, unknown> {
  if (!raw) return {};
  if (type?.includes('application/x-www-form-urlencoded')) return parseForm(raw);
  try {
    const parsed: unknown = JSON.parse(raw);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function send(res: ServerResponse, answer: StandinResponse): void {
  const body = answer.body === undefined ? '' : JSON.stringify(answer.body);
  res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
  res.end(body);
}

/** Starts `routes` on 127.0.0.1 at a free port. Unknown paths answer `notFound`. */
export async function startLoopback(options: {
  routes: Route[];
  faults: Faults;
  notFound: () => StandinResponse;
  /** The body of a faulted status answer when the fault names none. */
  faultBody?: (status: number) => unknown;
}): Promise<Loopback> {
  const calls: Loopback['calls'] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const method = req.method ?? 'GET';
      // A test's own calls in the provider's name (its Dashboard) are not galang's: no fault.
      const control = req.headers['x-standin-control'] !== undefined;
      const fault = control ? undefined : options.faults.take(method, url.pathname);
      if (fault?.kind === 'hang') {
        calls.push({ method, path: url.pathname, status: 'hang' });
        return; // Held until the client gives up or the server closes.
      }
      if (fault) {
        calls.push({ method, path: url.pathname, status: fault.status });
        send(res, { status: fault.status, body: fault.body ?? options.faultBody?.(fault.status) });
        return;
      }
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const request: StandinRequest = {
        method,
        url,
        headers: req.headers,
        rawBody,
        body: parseBody(rawBody, req.headers['content-type']),
      };
      const route = options.routes.find((r) => r.method === method && r.path.test(url.pathname));
      const params = route ? (route.path.exec(url.pathname) ?? []).slice(1) : [];
      Promise.resolve(
        route ? route.handle(request, params.map(decodeURIComponent)) : options.notFound(),
      )
        .then((answer) => {
          calls.push({ method, path: url.pathname, status: answer.status });
          send(res, answer);
        })
        .catch((error: unknown) => {
          calls.push({ method, path: url.pathname, status: 500 });
          send(res, { status: 500, body: { message: String(error) } });
        });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => {
          resolve();
        });
      }),
  };
}

/** HTTP Basic with the key as user and no password, as Midtrans and Xendit take it. */
export function basicUser(headers: IncomingMessage['headers']): string | undefined {
  const match = /^Basic (.+)$/.exec(headers.authorization ?? '');
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  return decoded.endsWith(':') ? decoded.slice(0, -1) : undefined;
}
