import type { HTTPMethods } from 'fastify';
import { errorCatalogue } from '../../src/errors/error-catalogue';
import type { ErrorCode } from '../../src/errors/error-catalogue';
import { CLIENT_SECRET, OPERATOR_SECRET, createCampaign, startStack } from '../support/stack';
import type { Stack } from '../support/stack';

interface Operation {
  security?: Record<string, string[]>[];
  responses: Record<
    string,
    {
      content?: Record<
        string,
        { examples?: Record<string, { value: { type: string; status: number; code: string } }> }
      >;
    }
  >;
}
interface Document {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, { type: string; scheme: string }> };
}

/** Every route the API registers, with its success status (the docs' own routes are hidden). */
const ROUTES: [HTTPMethods, string, string][] = [
  ['POST', '/v1/donations', '202'],
  ['GET', '/v1/donations/:id', '200'],
  ['POST', '/v1/donations/:id/refunds', '202'],
  ['GET', '/v1/campaigns/:id/progress', '200'],
  ['GET', '/v1/campaigns/:id/donations', '200'],
  ['POST', '/v1/donations/:id/message/hide', '200'],
  ['POST', '/v1/donor-erasures', '200'],
  ['POST', '/v1/pledges', '202'],
  ['GET', '/v1/pledges/:id', '200'],
  ['PATCH', '/v1/pledges/:id', '200'],
  ['POST', '/v1/pledges/:id/pause', '200'],
  ['POST', '/v1/pledges/:id/resume', '200'],
  ['POST', '/v1/pledges/:id/cancel', '200'],
  ['GET', '/v1/pledges/:id/manage', '200'],
  ['POST', '/v1/pledges/:id/manage/pause', '200'],
  ['POST', '/v1/pledges/:id/manage/resume', '200'],
  ['POST', '/v1/pledges/:id/manage/cancel', '200'],
  ['GET', '/v1/donations/:id/receipt', '200'],
  ['GET', '/v1/receipts/:number.pdf', '200'],
  ['POST', '/v1/campaigns', '201'],
  ['GET', '/v1/campaigns/:id', '200'],
  ['POST', '/v1/campaigns/:id/close', '200'],
  ['POST', '/v1/webhooks/:provider', '200'],
  ['POST', '/v1/codec/decode', '200'],
  ['POST', '/v1/codec/encode', '200'],
  ['GET', '/healthz', '200'],
  ['GET', '/readyz', '200'],
  ['GET', '/metrics', '200'],
];
const openapiPath = (url: string) => url.replace(/:(\w+)/g, '{$1}');

describe('OpenAPI document and Swagger UI', () => {
  let stack: Stack;
  let doc: Document;

  beforeAll(async () => {
    stack = await startStack({ noWorker: true });
    const response = await fetch(`${stack.apiUrl}/docs/json`);
    expect(response.status).toBe(200);
    doc = (await response.json()) as Document;
  });
  afterAll(async () => {
    await stack.stop();
  });

  it('lists every registered route, and only those, with its success and problem responses', () => {
    expect(doc.openapi).toBe('3.1.0');
    const documented = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(documented.sort()).toEqual(
      ROUTES.map(([method, url]) => `${method} ${openapiPath(url)}`).sort(),
    );
    for (const [method, url, success] of ROUTES) {
      expect(stack.app.hasRoute({ method, url })).toBe(true);
      const operation = doc.paths[openapiPath(url)]?.[method.toLowerCase()];
      expect(Object.keys(operation?.responses ?? {})).toEqual(
        expect.arrayContaining([success, '400', '500', '503']),
      );
      expect(operation?.responses['500']?.content).toHaveProperty(['application/problem+json']);
    }
  });

  it('has an example of every error in the catalogue, as the API answers it', () => {
    const seen = new Map<string, { type: string; status: number; code: string }>();
    for (const methods of Object.values(doc.paths)) {
      for (const operation of Object.values(methods)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          const examples = response.content?.['application/problem+json']?.examples ?? {};
          for (const [code, example] of Object.entries(examples)) {
            expect(example.value.status).toBe(Number(status));
            seen.set(code, example.value);
          }
        }
      }
    }
    expect([...seen.keys()].sort()).toEqual(Object.keys(errorCatalogue).sort());
    for (const [code, problem] of seen) {
      expect(problem).toMatchObject({
        type: `/problems/${code}`,
        code,
        status: errorCatalogue[code as ErrorCode].status,
      });
    }
    // Errors a route cannot answer are not listed under it.
    const progress = doc.paths['/v1/campaigns/{id}/progress']?.get;
    expect(progress?.responses).not.toHaveProperty('401');
    expect(
      progress?.responses['404']?.content?.['application/problem+json']?.examples,
    ).toHaveProperty('campaign-not-found');
  });

  it('documents under each route the problems that route really answers', async () => {
    const client = { authorization: `Bearer ${CLIENT_SECRET}` };
    const operator = { authorization: `Bearer ${OPERATOR_SECRET}` };
    const json = { 'content-type': 'application/json' };
    const campaignId = await createCampaign(stack.db);
    const body = JSON.stringify({
      campaignId: 'no-such-campaign',
      amount: 10_000,
      currency: 'IDR',
      donor: { name: 'Ani', email: 'ani@example.com', anonymous: false },
      paymentMethod: 'qris',
    });
    const missing = '00000000-0000-4000-8000-000000000000';
    // Real requests and the answers written out here, not read from the catalogue.
    const cases: [string, string, RequestInit, number, string][] = [
      ['POST', '/v1/donations', { headers: json, body }, 401, 'unauthorized'],
      [
        'POST',
        '/v1/donations',
        { headers: { ...client, ...json }, body },
        400,
        'idempotency-key-missing',
      ],
      [
        'POST',
        '/v1/donations',
        { headers: { ...client, ...json, 'idempotency-key': 'k-404' }, body },
        404,
        'campaign-not-found',
      ],
      [
        'POST',
        '/v1/donations',
        { headers: { ...client, ...json, 'idempotency-key': 'k-400' }, body: '{"amount":0}' },
        400,
        'validation-failed',
      ],
      ['GET', `/v1/donations/${missing}`, { headers: client }, 404, 'donation-not-found'],
      ['GET', '/v1/campaigns/no-such-campaign/progress', {}, 404, 'campaign-not-found'],
      ['GET', `/v1/campaigns/${campaignId}`, { headers: client }, 403, 'forbidden'],
      [
        'POST',
        '/v1/campaigns/no-such-campaign/close',
        { headers: operator },
        404,
        'campaign-not-found',
      ],
      [
        'POST',
        '/v1/webhooks/no-such-provider',
        { headers: json, body: '{}' },
        404,
        'provider-unknown',
      ],
      [
        'POST',
        '/v1/webhooks/simulator',
        { headers: json, body: '{}' },
        401,
        'webhook-signature-invalid',
      ],
    ];
    for (const [method, url, init, status, code] of cases) {
      const response = await fetch(`${stack.apiUrl}${url}`, { method, ...init });
      const answered = (await response.json()) as Record<string, unknown>;
      expect({ method, url, status: response.status, code: answered.code }).toEqual({
        method,
        url,
        status,
        code,
      });
      const template = Object.keys(doc.paths).find((path) =>
        new RegExp(`^${path.replace(/\{\w+\}/g, '[^/]+')}$`).test(url),
      );
      const documented =
        doc.paths[template ?? '']?.[method.toLowerCase()]?.responses[String(status)]?.content?.[
          'application/problem+json'
        ]?.examples?.[code]?.value;
      // The example is the answer, but for the request's own path, detail and field errors.
      const { type, title } = answered;
      expect({ method, url, documented }).toEqual({
        method,
        url,
        documented: expect.objectContaining({ type, title, status, code }) as unknown,
      });
    }
  });

  it('declares the client, operator and codec bearer keys, per route', () => {
    expect(doc.components.securitySchemes).toEqual({
      apiKey: expect.objectContaining({ type: 'http', scheme: 'bearer' }) as unknown,
      operatorKey: expect.objectContaining({ type: 'http', scheme: 'bearer' }) as unknown,
      codecKey: expect.objectContaining({ type: 'http', scheme: 'bearer' }) as unknown,
    });
    expect(doc.paths['/v1/donations']?.post?.security).toEqual([{ apiKey: [] }]);
    expect(doc.paths['/v1/donations/{id}/refunds']?.post?.security).toEqual([{ operatorKey: [] }]);
    expect(doc.paths['/v1/donations/{id}']?.get?.security).toEqual([
      { apiKey: [] },
      { operatorKey: [] },
    ]);
    expect(doc.paths['/healthz']?.get?.security).toEqual([]);
  });

  it('serves Swagger UI at /docs without credentials', async () => {
    const response = await fetch(`${stack.apiUrl}/docs`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/html');
    expect(await response.text()).toContain('swagger-ui');
  });
});
