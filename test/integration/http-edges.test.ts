import { randomUUID } from 'node:crypto';
import net from 'node:net';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config/config';
import type { Config } from '../../src/config/config';
import { buildApp } from '../../src/runtime/api-app';
import { createMetrics } from '../../src/observability/metrics';
import { createProviders } from '../../src/runtime/open-resources';
import {
  CLIENT_SECRET,
  createCampaign,
  donationBody,
  eventually,
  startStack,
} from '../support/stack';
import { postDonation } from '../support/donations';
import { TcpProxy } from '../support/tcp-proxy';
import { testState } from '../support/test-env';
import type { Stack } from '../support/stack';
import { productionEnv } from '../support/production-env';
import { headersNamed, helmetHeaders } from '../support/helmet-headers';
import { PAGE_HELMET_OPTIONS } from '../../src/security/security-headers';

const METRICS_TOKEN = 'scrape-token-0123456789';

/**
 * The HTTP server's edges on the real app: slow clients are cut, responses carry the API's
 * security headers and pages Helmet's, /metrics wants its token, /docs is off in production, a
 * failing request's log lines keep its secrets out, and the simulator's webhook route exists
 * only where the simulator is the provider.
 */
describe('HTTP edges', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      noWorker: true,
      env: { HTTP_REQUEST_TIMEOUT_MS: '1000', METRICS_TOKEN },
    });
  });
  afterAll(async () => {
    await stack.stop();
  });

  /** Another app on the stack's resources, configured by `config`. */
  const appWith = (config: Config): Promise<FastifyInstance> =>
    buildApp({
      config,
      db: stack.db,
      redis: stack.redis,
      idempotencyStore: stack.store,
      temporal: stack.temporal,
      providers: createProviders(config),
      defaultProvider: config.payments.provider,
      metrics: createMetrics(),
      logger: false,
    });

  it('cuts a client that trickles its body at the request timeout, with a 408', async () => {
    const { port } = new URL(stack.apiUrl);
    const socket = net.connect({ host: '127.0.0.1', port: Number(port) });
    const declared = 5_000;
    let sent = 0;
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString();
    });
    const closed = new Promise<void>((resolve) => {
      socket.once('close', () => {
        resolve();
      });
    });
    await new Promise<void>((resolve) => {
      socket.once('connect', () => {
        resolve();
      });
    });
    socket.write(
      [
        'POST /v1/donations HTTP/1.1',
        'Host: galang.test',
        `Authorization: Bearer ${CLIENT_SECRET}`,
        `Idempotency-Key: slow-${randomUUID()}`,
        'Content-Type: application/json',
        `Content-Length: ${declared}`,
        '',
        '',
      ].join('\r\n'),
    );
    // One byte every 100 ms: the whole body would take over eight minutes.
    const trickle = setInterval(() => {
      if (socket.writable) {
        socket.write('{');
        sent++;
      }
    }, 100);
    try {
      await closed;
    } finally {
      clearInterval(trickle);
    }
    expect(received).toMatch(/^HTTP\/1\.1 408/);
    expect(sent).toBeLessThan(declared / 10);
  });

  it('sends API answers OWASP’s API headers and /docs Helmet’s page headers', async () => {
    // Every header Helmet knows, so a page header leaking onto the API would show.
    const helmetNames = Object.keys(await helmetHeaders({}));
    const documented: Record<string, string | undefined> = {
      // No answer of the API is kept by a browser or a shared cache (a donation, a problem).
      'cache-control': 'no-store',
      'content-security-policy': "default-src 'none';frame-ancestors 'none'",
      'cross-origin-resource-policy': 'same-origin',
      'strict-transport-security': 'max-age=31536000; includeSubDomains',
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
    };
    const names = [...new Set([...helmetNames, ...Object.keys(documented)])];
    const apiHeaders = Object.fromEntries(names.map((name) => [name, documented[name] ?? null]));
    // A route's answer, a problem from the error handler and the not-found handler alike.
    const campaignId = await createCampaign(stack.db);
    const asClient = { authorization: `Bearer ${CLIENT_SECRET}` };
    for (const [path, headers] of [
      ['/healthz', {}],
      ['/metrics', {}],
      ['/no-such-route', {}],
      [`/v1/donations/${randomUUID()}`, asClient],
      [`/v1/campaigns/no-such-campaign/progress`, {}],
    ] as const) {
      const answer = await fetch(`${stack.apiUrl}${path}`, { headers });
      expect({ path, headers: headersNamed(answer, names) }).toEqual({ path, headers: apiHeaders });
    }
    // The public progress is cacheable on purpose (ETag, a few seconds): it keeps its own.
    const progress = await fetch(`${stack.apiUrl}/v1/campaigns/${campaignId}/progress`);
    expect(progress.status).toBe(200);
    expect(progress.headers.get('cache-control')).toMatch(/^(public, max-age=5|no-cache)/);
    // Swagger UI's pages: exactly what @fastify/helmet sets with the pages' options, except the
    // Content-Security-Policy Swagger UI brings, which lets its scripts run.
    const docs = await fetch(`${stack.apiUrl}/docs/static/index.html`);
    expect(docs.status).toBe(200);
    const helmets = await helmetHeaders(PAGE_HELMET_OPTIONS);
    const { 'content-security-policy': helmetPolicy, ...rest } = helmets;
    expect(headersNamed(docs, Object.keys(rest))).toEqual(rest);
    expect(headersNamed(docs, names)).toMatchObject({
      'referrer-policy': 'no-referrer',
      'x-frame-options': 'DENY',
    });
    // Static files keep @fastify/static's caching.
    const stylesheet = await fetch(`${stack.apiUrl}/docs/static/swagger-ui.css`);
    expect(stylesheet.status).toBe(200);
    expect(stylesheet.headers.get('cache-control')).toBe('public, max-age=0');
    const docsPolicy = docs.headers.get('content-security-policy');
    expect(docsPolicy).toMatch(/script-src 'self'/);
    expect(docsPolicy).not.toBe(helmetPolicy);
  });

  it('refuses /metrics without the token when one is set', async () => {
    const scrape = (authorization?: string) =>
      fetch(`${stack.apiUrl}/metrics`, {
        headers: authorization === undefined ? {} : { authorization },
      });
    const refused = await scrape();
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ code: 'unauthorized' });
    expect((await scrape('Bearer wrong-token-0123456789')).status).toBe(401);
    const scraped = await scrape(`Bearer ${METRICS_TOKEN}`);
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toMatch(/galang_http_request/);
  });

  it('serves no /docs and no simulator webhook in production unless asked to', async () => {
    const config = loadConfig({ ...productionEnv(), DATABASE_URL: stack.config.databaseUrl });
    const app = await appWith(config);
    try {
      expect((await app.inject({ url: '/docs' })).statusCode).toBe(404);
      expect((await app.inject({ url: '/docs/json' })).statusCode).toBe(404);
      const simulator = await app.inject({
        method: 'POST',
        url: '/v1/webhooks/simulator',
        payload: '{}',
      });
      expect(simulator.statusCode).toBe(404);
      expect(simulator.json()).toMatchObject({ code: 'provider-unknown' });
      // The codec endpoint wants a codec key: production never has the public dev key.
      expect(
        (await app.inject({ method: 'POST', url: '/v1/codec/decode', payload: { payloads: [] } }))
          .statusCode,
      ).toBe(401);
    } finally {
      await app.close();
    }
    const withDocs = await appWith(
      loadConfig({
        ...productionEnv({ DOCS_ENABLED: 'true' }),
        DATABASE_URL: stack.config.databaseUrl,
      }),
    );
    try {
      expect((await withDocs.inject({ url: '/docs/json' })).statusCode).toBe(200);
    } finally {
      await withDocs.close();
    }
  });

  it('keeps credentials, keys and e-mail addresses out of the lines of a failing donation', async () => {
    // The app's own logger options (its redaction included) on an API that reaches neither
    // Temporal nor Postgres: the donation fails, and the app logs the error it met.
    const lines: string[] = [];
    const temporal = await TcpProxy.start(testState().temporalAddress);
    const postgres = await TcpProxy.start('127.0.0.1:5432');
    temporal.set('refuse');
    postgres.set('refuse');
    const apiDatabaseUrl = new URL(testState().databaseUrl);
    apiDatabaseUrl.port = String(postgres.port);
    const failing = await startStack({
      noWorker: true,
      apiTemporalAddress: temporal.address,
      apiDatabaseUrl: apiDatabaseUrl.toString(),
      apiLogger: {
        level: 'info',
        stream: {
          write: (line: string) => {
            lines.push(line);
          },
        },
      },
      env: { EARLY_RETURN_MS: '1000', TEMPORAL_REQUEST_TIMEOUT_MS: '1000' },
    });
    try {
      const campaignId = await createCampaign(failing.db);
      const key = `redact-key-${randomUUID()}`;
      const email = `donor-${randomUUID()}@example.com`;
      const body = donationBody(campaignId);
      const response = await postDonation(
        failing.apiUrl,
        key,
        { ...body, donor: { ...body.donor, email } },
        { cookie: 'session=cookie-secret-42' },
      );
      expect(response.status).toBe(503);
      const requestId = response.headers.get('x-request-id');
      const own = () =>
        lines
          .map((line) => JSON.parse(line) as { reqId?: string; msg?: string; err?: object })
          .filter((line) => line.reqId === requestId);
      // The request's real lines (the last one is written once the answer went out).
      await eventually(
        async () => own().some((line) => line.msg === 'request completed') || undefined,
      );
      expect(own().map((line) => line.msg)).toEqual([
        'incoming request',
        'dependency unavailable',
        'request completed',
      ]);
      expect(own()[1]?.err).toMatchObject({ type: 'DatabaseUnavailableError' });
      const written = lines.join('');
      for (const secret of [CLIENT_SECRET, key, email, 'cookie-secret-42']) {
        expect(written).not.toContain(secret);
      }
    } finally {
      await failing.stop();
      await temporal.close();
      await postgres.close();
    }
  });
});
