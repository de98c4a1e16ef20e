import path from 'node:path';
import { ensureTemporalBinary } from '../../src/temporal/dev-server';
import { searchAttributeNames } from '../../workflows/contracts';
import { run, waitFor } from './commands';
import type { Log } from './commands';
import type { StackPki } from './pki';
import { Supervised, probing } from './supervisor';
import type { TemporalBinaries } from './temporal-build';

/** The `temporal` CLI as the operator runs it: this frontend, the operator's certificate. */
export type OperatorCli = (...args: string[]) => string;

export function operatorCli(address: string, pki: StackPki, log: Log): OperatorCli {
  const cli = ensureTemporalBinary(log);
  return (...args) =>
    run(cli, [
      ...args,
      '--address',
      address,
      '--tls-ca-path',
      pki.ca,
      '--tls-server-name',
      pki.frontendName,
      '--tls-cert-path',
      pki.clients.operator.cert,
      '--tls-key-path',
      pki.clients.operator.key,
    ]);
}

/** The Temporal server process under supervision, ready once the cluster reports healthy. */
export function temporalServer(options: {
  binaries: TemporalBinaries;
  configFile: string;
  dir: string;
  operator: OperatorCli;
  log: Log;
}): Supervised {
  return new Supervised(
    {
      name: 'temporal-server',
      command: options.binaries.server,
      args: ['--config-file', options.configFile, '--allow-no-auth', 'start'],
      env: { PATH: process.env.PATH ?? '' },
      cwd: options.dir,
      logFile: path.join(options.dir, 'temporal-server.log'),
      ready: probing('Temporal healthy', async () => {
        options.operator('operator', 'cluster', 'health');
        return true;
      }),
    },
    options.log,
  );
}

/**
 * What an operator does once for an application: create its namespace with a retention and
 * register the search attributes its workflows set; each step skipped where already done. A
 * new namespace, and a new attribute, reach the frontend's cache a few seconds later: each step
 * waits for it.
 */
export async function registerNamespace(
  operator: OperatorCli,
  namespace: string,
  retention: string,
  log: Log,
): Promise<void> {
  try {
    operator('operator', 'namespace', 'describe', '--namespace', namespace);
  } catch {
    operator('operator', 'namespace', 'create', '--namespace', namespace, '--retention', retention);
    log(`Namespace ${namespace} created, retention ${retention}`);
  }
  const listed = () => operator('operator', 'search-attribute', 'list', '--namespace', namespace);
  const missing = (text: string) =>
    searchAttributeNames.filter((name) => !new RegExp(`\\b${name}\\b`).test(text));
  const known = await waitFor(
    `namespace ${namespace} answering`,
    async () => listed(),
    60_000,
    1_000,
  );
  for (const name of missing(known)) {
    operator(
      'operator',
      'search-attribute',
      'create',
      '--namespace',
      namespace,
      '--name',
      name,
      '--type',
      'Keyword',
    );
  }
  await waitFor(
    `search attributes in ${namespace}`,
    async () => (missing(listed()).length === 0 ? true : undefined),
    60_000,
    1_000,
  );
  log(`Search attributes ${searchAttributeNames.join(', ')} registered in ${namespace}`);
}
