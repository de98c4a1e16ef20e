import { Client, Connection } from '@temporalio/client';
import { createDataConverter } from './payload-codec';
import { retryWithinDeadline } from './retry-within-deadline';
import { connectionOptions } from './temporal-connection';
import type { TemporalConnectionConfig } from './temporal-connection';

/**
 * A client on a lazy connection, which reconnects by itself: once the API has booted (its boot
 * checks Temporal over this very connection), a Temporal outage makes the requests that need it
 * 503 instead of ending the process. Every
 * client galang builds goes through here or {@link connectTemporalClient}, so each one has the
 * connection's TLS and API key and the payload codec.
 */
export function createTemporalClient(config: TemporalConnectionConfig): Client {
  return clientOn(lazyConnection(config), config);
}

/**
 * A client whose connection is made now (the worker's: it fails at start, not later). A failed
 * attempt closes what it opened, so a boot that waits for Temporal can try again and again.
 */
export async function connectTemporalClient(config: TemporalConnectionConfig): Promise<Client> {
  const connection = lazyConnection(config);
  try {
    await connection.ensureConnected();
  } catch (error) {
    await connection.close().catch(() => undefined);
    throw error;
  }
  return clientOn(connection, config);
}

function lazyConnection(config: TemporalConnectionConfig): Connection {
  return Connection.lazy({ ...connectionOptions(config), interceptors: [retryWithinDeadline()] });
}

function clientOn(connection: Connection, config: TemporalConnectionConfig): Client {
  return new Client({
    connection,
    namespace: config.namespace,
    dataConverter: createDataConverter(config.payloadKeys),
  });
}
