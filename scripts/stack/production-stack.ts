import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { defaultClaimsPath } from '../../src/idempotency/claims-location';
import { freePorts, namedPorts, run } from './commands';
import type { Log } from './commands';
import { galangEnv, makeSecrets, writeEnvFile } from './galang-env';
import type { GalangRole, StackSecrets } from './galang-env';
import { nginxBalancer } from './nginx';
import { makeStackPki } from './pki';
import type { StackPki } from './pki';
import { ownPostgres, ownRedis } from './own-services';
import { Supervised, lineMatching } from './supervisor';
import type { ProcessSpec } from './supervisor';
import { PROJECT_ROOT, ensureTemporalBinaries } from './temporal-build';
import { operatorCli, registerNamespace, temporalServer } from './temporal-cluster';
import type { OperatorCli } from './temporal-cluster';
import { dropTemporalDatabases, setupTemporalSchema } from './temporal-schema';
import type { PostgresServer } from './temporal-schema';
import { TEMPORAL_PORT_NAMES, writeTemporalServerConfig } from './temporal-server-config';
import { startMailSink } from '../../src/mail/mail-sink';
import type { MailSink } from '../../src/mail/mail-sink';

export interface ProductionStackOptions {
  log: Log;
  /** Skip `npm run build` (a caller that just built). */
  skipBuild?: boolean;
  /** PostgreSQL servers of the stack's own (a soak restarts them) instead of 127.0.0.1:5432. */
  ownPostgres?: boolean;
  /** API processes on each node's port (API_PROCESSES); 2 by default. */
  apiProcesses?: number;
  /**
   * API nodes, each with an LMDB of its own (a host of a deployment); 1 by default. With more,
   * deploy/nginx.conf runs in front of them and is the stack's API address.
   */
  apiNodes?: number;
  /** Worker processes; 2 by default. */
  workers?: number;
  /** The simulator settles each payment after this long; -1 (the default) leaves it to callers. */
  autoPayMs?: number;
  /**
   * Runs before the API starts, with the LMDB folder (a soak mounts a small tmpfs there). With
   * it, the idempotency claims live in that folder too, not in /dev/shm.
   */
  prepareLmdb?: (lmdbDir: string) => void;
  /** More environment for every galang process. */
  env?: Record<string, string>;
}

export interface ProductionStack {
  id: string;
  dir: string;
  apiUrl: string;
  simulatorUrl: string;
  secrets: StackSecrets;
  pki: StackPki;
  temporal: { address: string; namespace: string; operator: OperatorCli };
  /** galang's database. */
  databaseUrl: string;
  lmdbDir: string;
  /** The API nodes' process names (`api`, or `api-1`, `api-2`, … behind nginx). */
  apiNodes: readonly string[];
  /** Where the stack's SMTP server saves the mail it received. */
  mailDir: string;
  /** Every supervised process, by name: `postgres`, `temporal-postgres`, `redis`, `api`, … */
  processes: ReadonlyMap<string, Supervised>;
  stop(options?: StopOptions): Promise<void>;
}

/** What {@link ProductionStack.stop} leaves behind for a look: by default, nothing. */
export interface StopOptions {
  /** The stack's folder: logs, certificates, the servers' data. */
  keepFiles?: boolean;
  /** Its databases on the machine's PostgreSQL. */
  keepDatabases?: boolean;
}

const SHARED_POSTGRES: PostgresServer = { host: '127.0.0.1', port: 5432, user: 'postgres' };

/**
 * galang as production runs it, without Docker: built with `npm run build`, the Temporal server
 * at docker-compose.yml's version on PostgreSQL behind mutual TLS, its namespace and search
 * attributes set up by the operator's CLI, Redis, and the API, workers and payment simulator
 * from dist/ with NODE_ENV=production and secrets of their own. Everything on loopback, in a
 * folder of its own under `.data/stacks/`, on ports the kernel hands out, in databases named
 * after the stack; nothing it starts outlives {@link ProductionStack.stop}.
 */
export async function startProductionStack(
  options: ProductionStackOptions,
): Promise<ProductionStack> {
  const startedAt = Date.now();
  const log: Log = (line) => {
    options.log(`[${((Date.now() - startedAt) / 1000).toFixed(1)} s] ${line}`);
  };
  const id = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const dir = path.join(PROJECT_ROOT, '.data', 'stacks', id);
  mkdirSync(dir, { recursive: true });
  log(`Stack ${id} in ${dir}`);
  const started: Supervised[] = [];
  const processes = new Map<string, Supervised>();
  const databases = { main: `temporal_${id}`, visibility: `temporal_visibility_${id}` };
  const galangDatabase = `galang_${id}`;
  const dataDir = path.join(dir, 'galang');
  const lmdbDir = path.join(dataDir, 'idempotency');
  const mailDir = path.join(dir, 'mail');
  const nodeCount = options.apiNodes ?? 1;
  const apiNodes =
    nodeCount === 1 ? ['api'] : Array.from({ length: nodeCount }, (_, i) => `api-${i + 1}`);
  const nodeLmdbDir = (name: string) => (nodeCount === 1 ? lmdbDir : path.join(lmdbDir, name));
  let postgres = SHARED_POSTGRES;
  let temporalPostgres = SHARED_POSTGRES;
  let mailSink: MailSink | undefined;

  const launch = async (part: Supervised) => {
    processes.set(part.spec.name, part);
    await part.start();
    started.push(part);
  };
  const stop = async ({ keepFiles = false, keepDatabases = false }: StopOptions = {}) => {
    for (const part of [...started].reverse()) await part.stop();
    await mailSink?.stop();
    // The idempotency claims live in shared memory, outside the stack's folder.
    for (const name of apiNodes) {
      rmSync(defaultClaimsPath(nodeLmdbDir(name)), { recursive: true, force: true });
    }
    if (!keepDatabases && !options.ownPostgres) {
      const names = [databases.main, databases.visibility, galangDatabase];
      await dropTemporalDatabases(SHARED_POSTGRES, names);
    }
    if (!keepFiles) rmSync(dir, { recursive: true, force: true });
  };

  try {
    if (!options.skipBuild) {
      log('npm run build');
      run('npm', ['run', '--silent', 'build'], { cwd: PROJECT_ROOT });
    }
    const binaries = ensureTemporalBinaries(log);
    const ports = await namedPorts([
      'api',
      'simulator',
      'smtp',
      'redis',
      'postgres',
      'temporalPostgres',
      ...TEMPORAL_PORT_NAMES,
    ] as const);
    // Several nodes listen on ports of their own behind nginx, which takes the API port.
    const taken = new Set(Object.values(ports));
    const nodePorts =
      nodeCount === 1
        ? [ports.api]
        : (await freePorts(nodeCount + TEMPORAL_PORT_NAMES.length))
            .filter((port) => !taken.has(port))
            .slice(0, nodeCount);
    const pki = makeStackPki(path.join(dir, 'pki'), `${id}.galang.test`);

    if (options.ownPostgres) {
      postgres = { ...SHARED_POSTGRES, port: ports.postgres };
      temporalPostgres = { ...SHARED_POSTGRES, port: ports.temporalPostgres };
      await launch(ownPostgres('postgres', path.join(dir, 'postgres'), postgres.port, log));
      await launch(
        ownPostgres(
          'temporal-postgres',
          path.join(dir, 'temporal-postgres'),
          temporalPostgres.port,
          log,
        ),
      );
    }
    const redis = ownRedis(path.join(dir, 'redis'), ports.redis, log);
    await launch(redis);

    await setupTemporalSchema(binaries, temporalPostgres, databases, log);
    const temporalDir = path.join(dir, 'temporal');
    mkdirSync(temporalDir, { recursive: true });
    const configFile = writeTemporalServerConfig({
      dir: temporalDir,
      ports,
      postgres: temporalPostgres,
      databases,
      pki,
    });
    const temporal = {
      address: `127.0.0.1:${ports.frontend}`,
      namespace: 'galang',
      operator: operatorCli(`127.0.0.1:${ports.frontend}`, pki, log),
    };
    await launch(
      temporalServer({ binaries, configFile, dir: temporalDir, operator: temporal.operator, log }),
    );
    log(`Temporal ${binaries.version} on ${temporal.address}, mutual TLS only`);
    await registerNamespace(temporal.operator, temporal.namespace, '72h', log);

    // The SMTP server receipts go to: a real one, as a deployment has (saving to files).
    mailSink = await startMailSink({ host: '127.0.0.1', port: ports.smtp, dir: mailDir });
    const secrets = makeSecrets();
    mkdirSync(lmdbDir, { recursive: true });
    options.prepareLmdb?.(lmdbDir);
    const databaseUrl = `postgres://postgres@127.0.0.1:${postgres.port}/${galangDatabase}`;
    const endpoints = {
      apiPort: ports.api,
      simulatorPort: ports.simulator,
      smtpPort: ports.smtp,
      databaseUrl,
      redisUrl: `redis://127.0.0.1:${ports.redis}`,
      temporalAddress: temporal.address,
      namespace: temporal.namespace,
      dataDir,
    };
    const envOf = (role: GalangRole, extra: Record<string, string> = {}) => ({
      ...galangEnv(role, endpoints, secrets, pki),
      SIMULATOR_AUTO_PAY_MS: String(options.autoPayMs ?? -1),
      ...options.env,
      ...extra,
    });
    writeEnvFile(path.join(dir, 'api.env'), envOf('api'));
    const node = (
      name: string,
      entry: string,
      env: Record<string, string>,
      ready: RegExp,
    ): ProcessSpec => ({
      name,
      command: process.execPath,
      args: [path.join(PROJECT_ROOT, 'dist', 'src', 'entry', `${entry}.js`)],
      env,
      cwd: PROJECT_ROOT,
      logFile: path.join(dir, `${name}.log`),
      ready: lineMatching(ready),
    });
    await launch(
      new Supervised(
        node('simulator', 'simulator', envOf('simulator'), /"msg":"simulator listening"/),
        log,
      ),
    );
    const nodePort = (name: string) => nodePorts[apiNodes.indexOf(name)] ?? ports.api;
    for (const name of apiNodes) {
      const nodeLmdb = nodeLmdbDir(name);
      mkdirSync(nodeLmdb, { recursive: true });
      await launch(
        new Supervised(
          node(
            name,
            'api',
            envOf('api', {
              PORT: String(nodePort(name)),
              API_PROCESSES: String(options.apiProcesses ?? 2),
              LMDB_PATH: nodeLmdb,
              ...(options.prepareLmdb && { LMDB_CLAIMS_PATH: path.join(nodeLmdb, 'claims') }),
            }),
            /"msg":"api listening"/,
          ),
          log,
        ),
      );
    }
    if (nodeCount > 1) {
      const upstreams = apiNodes.map((name) => `127.0.0.1:${nodePort(name)}`);
      await launch(nginxBalancer(path.join(dir, 'nginx'), ports.api, upstreams, log));
      log(`nginx (deploy/nginx.conf) on :${ports.api} in front of ${upstreams.join(', ')}`);
    }
    const workerEnv = envOf('worker', { WORKER_METRICS_PORT: '0' });
    const workers = Array.from({ length: options.workers ?? 2 }, (_, i) =>
      node(`worker-${i + 1}`, 'worker', workerEnv, /"msg":"worker polling"/),
    );
    await Promise.all(workers.map((spec) => launch(new Supervised(spec, log))));
    log(
      `galang API on http://127.0.0.1:${ports.api} (production mode), simulator on :${ports.simulator}`,
    );
    return {
      id,
      dir,
      apiUrl: `http://127.0.0.1:${ports.api}`,
      simulatorUrl: `http://127.0.0.1:${ports.simulator}`,
      secrets,
      pki,
      temporal,
      databaseUrl,
      lmdbDir,
      apiNodes,
      mailDir,
      processes,
      stop,
    };
  } catch (error) {
    log(`Stack ${id} failed to start; logs kept in ${dir}`);
    await stop({ keepFiles: true });
    throw error;
  }
}
