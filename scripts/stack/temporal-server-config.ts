import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { LOAD_DYNAMIC_CONFIG } from '../../src/temporal/dev-server';
import type { StackPki } from './pki';

/** The ports one Temporal server process takes: four services, each gRPC plus membership. */
export const TEMPORAL_PORT_NAMES = [
  'frontend',
  'frontendHttp',
  'frontendMembership',
  'history',
  'historyMembership',
  'matching',
  'matchingMembership',
  'worker',
  'workerMembership',
  'metrics',
] as const;

export type TemporalPorts = Record<(typeof TEMPORAL_PORT_NAMES)[number], number>;

export interface TemporalServerSettings {
  dir: string;
  ports: TemporalPorts;
  /** Temporal's PostgreSQL server and its two databases (trust auth, no password). */
  postgres: { host: string; port: number; user: string };
  databases: { main: string; visibility: string };
  pki: StackPki;
  /** History shards: fixed for the cluster's life. A single node needs few. */
  historyShards?: number;
}

/**
 * Writes the server's config file and its dynamic config, and returns the config's path: one
 * cluster on loopback, PostgreSQL 12+ persistence, and mutual TLS on the frontend, between the
 * services and from Temporal's system worker, as a secured self-hosted cluster is configured.
 */
export function writeTemporalServerConfig(settings: TemporalServerSettings): string {
  const { ports, pki, postgres } = settings;
  const dynamicConfigFile = path.join(settings.dir, 'dynamic-config.yaml');
  writeFileSync(
    dynamicConfigFile,
    stringify(
      Object.fromEntries(
        Object.entries(LOAD_DYNAMIC_CONFIG).map(([key, value]) => [
          key,
          [{ value, constraints: {} }],
        ]),
      ),
    ),
  );
  const datastore = (databaseName: string, maxConns: number) => ({
    sql: {
      pluginName: 'postgres12',
      databaseName,
      connectAddr: `${postgres.host}:${postgres.port}`,
      connectProtocol: 'tcp',
      user: postgres.user,
      password: '',
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  });
  const service = (grpcPort: number, membershipPort: number, extra = {}) => ({
    rpc: { grpcPort, membershipPort, bindOnLocalHost: true, ...extra },
  });
  const mtlsServer = (pair: { cert: string; key: string }) => ({
    certFile: pair.cert,
    keyFile: pair.key,
    requireClientAuth: true,
    clientCaFiles: [pki.ca],
  });
  const config = {
    log: { stdout: true, level: 'warn', format: 'json' },
    persistence: {
      defaultStore: 'postgres-default',
      visibilityStore: 'postgres-visibility',
      numHistoryShards: settings.historyShards ?? 4,
      datastores: {
        'postgres-default': datastore(settings.databases.main, 20),
        'postgres-visibility': datastore(settings.databases.visibility, 4),
      },
    },
    global: {
      membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' },
      metrics: {
        prometheus: {
          framework: 'tally',
          timerType: 'histogram',
          listenAddress: `127.0.0.1:${ports.metrics}`,
        },
      },
      tls: {
        internode: {
          server: mtlsServer(pki.internode),
          client: { serverName: pki.internodeName, rootCaFiles: [pki.ca] },
        },
        frontend: {
          server: mtlsServer(pki.frontend),
          client: { serverName: pki.frontendName, rootCaFiles: [pki.ca] },
        },
        systemWorker: {
          certFile: pki.systemWorker.cert,
          keyFile: pki.systemWorker.key,
          client: { serverName: pki.frontendName, rootCaFiles: [pki.ca] },
        },
      },
    },
    services: {
      frontend: service(ports.frontend, ports.frontendMembership, { httpPort: ports.frontendHttp }),
      history: service(ports.history, ports.historyMembership),
      matching: service(ports.matching, ports.matchingMembership),
      worker: service(ports.worker, ports.workerMembership),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: {
          enabled: true,
          initialFailoverVersion: 1,
          rpcName: 'frontend',
          rpcAddress: `127.0.0.1:${ports.frontend}`,
        },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    dynamicConfigClient: { filepath: dynamicConfigFile, pollInterval: '10s' },
  };
  const file = path.join(settings.dir, 'temporal-server.yaml');
  writeFileSync(file, stringify(config));
  return file;
}
