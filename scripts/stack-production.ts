import { parseArgs } from 'node:util';
import { startProductionStack } from './stack/production-stack';
import { ensureTemporalBinaries } from './stack/temporal-build';

/**
 * `npm run stack:production [-- --own-postgres] [--keep]`: galang as production runs it, on
 * this machine without Docker (scripts/stack/production-stack.ts), until Ctrl-C; then
 * everything is stopped and removed (`--keep` leaves the folder and databases).
 * `-- --build-only` builds the Temporal server and its SQL tool, and stops there.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'own-postgres': { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
      'build-only': { type: 'boolean', default: false },
    },
  });
  const say = (line: string) => process.stdout.write(`${line}\n`);
  if (values['build-only']) {
    const binaries = ensureTemporalBinaries(say);
    say(`${binaries.server}\n${binaries.sqlTool}\nschemas in ${binaries.postgresSchemaDir}`);
    return;
  }
  const stack = await startProductionStack({ log: say, ownPostgres: values['own-postgres'] });
  say('');
  say(`API        ${stack.apiUrl}   (environment: ${stack.dir}/api.env)`);
  say(`Simulator  ${stack.simulatorUrl}`);
  say(
    `Temporal   ${stack.temporal.address} namespace ${stack.temporal.namespace} (mTLS; ${stack.dir}/pki)`,
  );
  say(`Logs       ${stack.dir}/*.log`);
  say(`Try it    set -a; . ${stack.dir}/api.env; set +a; curl $PUBLIC_URL/readyz`);
  say('Ctrl-C stops the stack.');
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  say('Stopping…');
  await stack.stop({ keepFiles: values.keep, keepDatabases: values.keep });
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
