import { randomBytes } from 'node:crypto';
import { isGrpcServiceError } from '@temporalio/client';
import { status } from '@grpc/grpc-js';
import { createTemporalClient } from '../../src/temporal/temporal-client';
import { TcpProxy } from '../support/tcp-proxy';

/**
 * The API's Temporal client when Temporal resets every connection: it still retries, but only
 * while a retry can end within the deadline the edge gave the call.
 */
describe("the Temporal client's retries", () => {
  it('fail a call whose next backoff would outlast its deadline, instead of waiting it out', async () => {
    const temporal = await TcpProxy.start('127.0.0.1:1');
    temporal.set('refuse');
    const client = createTemporalClient({
      address: temporal.address,
      namespace: 'default',
      tls: false,
      payloadKeys: [{ id: 'test', key: randomBytes(32).toString('base64') }],
    });
    try {
      const deadline = Date.now() + 2_000;
      const error: unknown = await client.connection
        .withDeadline(deadline, () =>
          client.workflow.start('donation', { workflowId: 'w', taskQueue: 'q', args: [] }),
        )
        .catch((caught: unknown) => caught);
      const cause = (error as { cause?: unknown }).cause;
      // Waited out, the backoff ends past the deadline and the next attempt says DEADLINE_EXCEEDED.
      expect(isGrpcServiceError(cause) && cause.code).toBe(status.UNAVAILABLE);
      expect(temporal.connections).toBeGreaterThan(1);
    } finally {
      await client.connection.close();
      await temporal.close();
    }
  });
});
