import { Client, Connection } from '@temporalio/client';

export interface TemporalClientOptions {
  address: string;
  namespace: string;
}

/**
 * A client on a lazy connection: the API boots and serves reads while Temporal is down, and a
 * request that needs Temporal fails with 503 instead of the process refusing to start.
 */
export function createTemporalClient(options: TemporalClientOptions): Client {
  const connection = Connection.lazy({ address: options.address });
  return new Client({ connection, namespace: options.namespace });
}
