import { randomUUID } from 'node:crypto';
import { CLIENT_SECRET, startStack } from '../support/stack';
import type { Stack } from '../support/stack';

/**
 * An API pointed at a Temporal namespace that does not exist is misconfigured, and says so:
 * Temporal answers NOT_FOUND for the namespace as it does for a workflow, but a donation the
 * edge cannot look up there is unknown, not absent.
 */
describe('an API on a namespace Temporal does not have', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({
      noWorker: true,
      env: { TEMPORAL_NAMESPACE: `missing-${randomUUID()}` },
    });
  });
  afterAll(async () => {
    await stack.stop();
  });

  it('answers a GET for a donation not yet recorded with 503, not 404', async () => {
    const response = await stack.app.inject({
      method: 'GET',
      url: `/v1/donations/${randomUUID()}`,
      headers: { authorization: `Bearer ${CLIENT_SECRET}` },
    });
    expect(response.statusCode).toBe(503);
    expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
    expect(response.json()).toMatchObject({ status: 503, code: 'service-unavailable' });
  });

  it('reports Temporal degraded: the server answers, the namespace does not', async () => {
    const readyz = await stack.app.inject({ method: 'GET', url: '/readyz' });
    expect(readyz.statusCode).toBe(200);
    expect(readyz.json()).toMatchObject({ status: 'degraded', degraded: ['temporal'] });
  });
});
