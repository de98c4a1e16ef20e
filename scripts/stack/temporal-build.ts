import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import path from 'node:path';
import { run } from './commands';
import type { Log } from './commands';

export const PROJECT_ROOT = path.resolve(__dirname, '../..');

/** The Temporal server module; its version is the one docker-compose.yml runs. */
export const TEMPORAL_SERVER_MODULE = 'go.temporal.io/server';

/** The server and its SQL schema tool, built from the Go module proxy, and the module's schemas. */
export interface TemporalBinaries {
  version: string;
  server: string;
  sqlTool: string;
  /** The module's `schema/postgresql/v12`, with `temporal/` and `visibility/` in it. */
  postgresSchemaDir: string;
}

/** The `temporalio/server:X.Y.Z` tag of docker-compose.yml, so both stacks run one version. */
export function composeTemporalVersion(root = PROJECT_ROOT): string {
  const compose = readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');
  const match = /image:\s*temporalio\/server:(\d+\.\d+\.\d+)\s/.exec(compose);
  if (!match?.[1]) throw new Error('docker-compose.yml names no temporalio/server:X.Y.Z image');
  return `v${match[1]}`;
}

/**
 * Builds `temporal-server` and `temporal-sql-tool` once per version into
 * `.tools/temporal-server-<version>/` (`go install`, so Go's caches make a rebuild cheap), and
 * finds the module's schema files in the module cache. A version already built is reused.
 */
export function ensureTemporalBinaries(
  log: Log,
  version = composeTemporalVersion(),
): TemporalBinaries {
  const bin = path.join(PROJECT_ROOT, '.tools', `temporal-server-${version}`);
  const server = path.join(bin, 'temporal-server');
  const sqlTool = path.join(bin, 'temporal-sql-tool');
  if (!existsSync(server) || !existsSync(sqlTool)) {
    log(`Building Temporal server ${version} and its SQL tool into ${bin} (once; minutes cold).`);
    const started = Date.now();
    mkdirSync(bin, { recursive: true });
    const packages = ['cmd/server', 'cmd/tools/sql'].map(
      (pkg) => `${TEMPORAL_SERVER_MODULE}/${pkg}@${version}`,
    );
    go(['install', ...packages], { CGO_ENABLED: '0', GOBIN: bin });
    // `go install` names a binary after its package's folder: server, sql.
    renameSync(path.join(bin, 'server'), server);
    renameSync(path.join(bin, 'sql'), sqlTool);
    log(`Built in ${Math.round((Date.now() - started) / 1000)} s.`);
  }
  const module = JSON.parse(
    go(['mod', 'download', '-json', `${TEMPORAL_SERVER_MODULE}@${version}`], {}),
  ) as { Dir?: string };
  if (!module.Dir) throw new Error(`go mod download found no folder for ${version}`);
  return {
    version,
    server,
    sqlTool,
    postgresSchemaDir: path.join(module.Dir, 'schema', 'postgresql', 'v12'),
  };
}

function go(args: string[], env: Record<string, string>): string {
  // Outside any Go module, so `go mod download` and `go install pkg@version` stand alone.
  return run('go', args, { cwd: path.parse(PROJECT_ROOT).root, env });
}
