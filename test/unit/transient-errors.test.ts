import net from 'node:net';
import { ServiceError } from '@temporalio/client';
import { Redis } from 'ioredis';
import pg from 'pg';
import { isTransientInfrastructureError } from '../../src/errors/transient';

/** A port nothing listens on: a server bound and closed again. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) =>
    server.close(() => {
      resolve();
    }),
  );
  return port;
}

function databaseError(code: string): pg.DatabaseError {
  const error = new pg.DatabaseError('from Postgres', 0, 'error');
  error.code = code;
  return error;
}

/** What @grpc/grpc-js rejects a call with; Temporal's client wraps it in a ServiceError. */
function grpcError(code: number): Error {
  return Object.assign(new Error(`${code} status`), { code, details: 'status', metadata: {} });
}

describe('transient infrastructure errors', () => {
  it('counts a refused connection by its Node error code', async () => {
    const port = await closedPort();
    const refused = await new Promise<Error>((resolve) => {
      net.connect(port, '127.0.0.1').on('error', resolve);
    });
    expect((refused as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
    expect(isTransientInfrastructureError(refused)).toBe(true);
    expect(isTransientInfrastructureError(new Error('wrapped', { cause: refused }))).toBe(true);
  });

  it('counts Postgres connection, rollback, resource and operator SQLSTATEs, not a broken constraint', () => {
    for (const code of ['08006', '40001', '40P01', '53300', '57P01']) {
      expect(isTransientInfrastructureError(databaseError(code))).toBe(true);
    }
    for (const code of ['23505', '22003', '42P01']) {
      expect(isTransientInfrastructureError(databaseError(code))).toBe(false);
    }
  });

  it('counts Temporal unavailable, rate-limiting or past its deadline, not a refused call', () => {
    const wrapped = (code: number) =>
      new ServiceError('Failed to start Workflow', { cause: grpcError(code) });
    expect(isTransientInfrastructureError(wrapped(14))).toBe(true);
    expect(isTransientInfrastructureError(wrapped(4))).toBe(true);
    expect(isTransientInfrastructureError(wrapped(8))).toBe(true);
    // ALREADY_EXISTS, INVALID_ARGUMENT: the request's own fault.
    expect(isTransientInfrastructureError(wrapped(6))).toBe(false);
    expect(isTransientInfrastructureError(wrapped(3))).toBe(false);
  });

  it('counts a Redis command given up after its retries', async () => {
    const redis = new Redis(await closedPort(), '127.0.0.1', {
      maxRetriesPerRequest: 0,
      retryStrategy: () => 50,
    });
    redis.on('error', () => undefined);
    try {
      const failed = await redis.get('k').then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failed).toBeInstanceOf(Error);
      expect(isTransientInfrastructureError(failed)).toBe(true);
    } finally {
      redis.disconnect();
    }
  });

  it('reads no message text: only classes and codes decide', () => {
    for (const message of [
      '14 UNAVAILABLE: connect failed',
      'Connection is closed.',
      'DEADLINE_EXCEEDED',
    ]) {
      expect(isTransientInfrastructureError(new Error(message))).toBe(false);
    }
    expect(isTransientInfrastructureError('ECONNREFUSED')).toBe(false);
    expect(isTransientInfrastructureError(undefined)).toBe(false);
  });
});
