import { Client, Connection } from '@temporalio/client';
import { createDataConverter } from './payload-codec';
import { connectionOptions } from './temporal-connection';
import type { TemporalConnectionConfig } from './temporal-connection';

/**
 * A client on a lazy connection: the API boots and serves reads while Temporal is down, and a
 * request that needs Temporal fails with 503 instead of the process refusing to start. Every
 * client galang builds goes through here or {@link connectTemporalClient}, so each one has the
 * connection's TLS and API key and the payload codec.
 */
export function createTemporalClient(config: TemporalConnectionConfig): Client {
  return clientOn(Connection.lazy(connectionOptions(config)), config);
}

/** A client whose connection is made now (the worker's: it fails at start, not later). */
export async function connectTemporalClient(config: TemporalConnectionConfig): Promise<Client> {
  return clientOn(await Connection.connect(connectionOptions(config)), config);
}

function clientOn(connection: Connection, config: TemporalConnectionConfig): Client {
  return new Client({
    connection,
    namespace: config.namespace,
    dataConverter: createDataConverter(config.payloadKeys),
  });
}
