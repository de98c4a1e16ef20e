import { readFileSync } from 'node:fs';
import type { TLSConfig } from '@temporalio/client';
import type { PayloadKey } from './payload-codec';

/** TLS to the Temporal frontend; files are PEM, read when a connection is made. */
export interface TemporalTlsConfig {
  /** The server's CA; the system's roots when unset (Temporal Cloud). */
  readonly caFile?: string | undefined;
  /** The name the server's certificate must carry, when it differs from the address's host. */
  readonly serverName?: string | undefined;
  /** mTLS: this client's certificate and key. */
  readonly certFile?: string | undefined;
  readonly keyFile?: string | undefined;
}

/** Where and how galang's clients and workers reach Temporal. */
export interface TemporalConnectionConfig {
  readonly address: string;
  readonly namespace: string;
  /** `false`: plaintext (the dev server, a private network). */
  readonly tls: TemporalTlsConfig | false;
  /** Sent as `Authorization: Bearer …` (Temporal Cloud API keys). */
  readonly apiKey?: string | undefined;
  /** Keys of the payload codec: the first encrypts, every one decrypts. */
  readonly payloadKeys: readonly PayloadKey[];
}

/** The SDK's connection options (client `Connection` and worker `NativeConnection` alike). */
export function connectionOptions(config: TemporalConnectionConfig): {
  address: string;
  tls: TLSConfig | false;
  apiKey?: string;
} {
  return {
    address: config.address,
    tls: config.tls === false ? false : tlsOptions(config.tls),
    ...(config.apiKey === undefined ? {} : { apiKey: config.apiKey }),
  };
}

function tlsOptions(tls: TemporalTlsConfig): TLSConfig {
  return {
    ...(tls.serverName === undefined ? {} : { serverNameOverride: tls.serverName }),
    ...(tls.caFile === undefined ? {} : { serverRootCACertificate: readFileSync(tls.caFile) }),
    ...(tls.certFile !== undefined &&
      tls.keyFile !== undefined && {
        clientCertPair: { crt: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) },
      }),
  };
}
