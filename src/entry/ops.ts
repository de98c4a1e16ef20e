import { ConfigError, loadConfig } from '../config/config';
import { createDatabase } from '../db/database';
import { runOps } from '../ops/cli';
import { createOpsContext } from '../runtime/create-services';
import type { OpsContext } from '../ops/ops-context';
import { createProviders } from '../runtime/open-resources';
import { closeRedis, openRedis } from '../db/redis-connection';
import { createTemporalClient } from '../temporal/temporal-client';

/**
 * `npm run ops -- <command>`: the operator CLI (src/ops/). The configuration is read only when a
 * command runs, so `--help` works anywhere; the database is not migrated (the API and the worker
 * do that).
 */
async function main(): Promise<number> {
  const closers: (() => Promise<void> | void)[] = [];
  const io = {
    out: (text: string) => process.stdout.write(`${text}\n`),
    err: (text: string) => process.stderr.write(`${text}\n`),
  };
  const open = async (): Promise<OpsContext> => {
    const config = loadConfig();
    const db = createDatabase({ connectionString: config.databaseUrl, max: 2 });
    closers.push(() => db.destroy());
    const temporal = createTemporalClient(config.temporal);
    closers.push(() => temporal.connection.close());
    const redis = openRedis(config);
    closers.push(() => closeRedis(redis));
    return createOpsContext(config, { db, redis, temporal, providers: createProviders(config) });
  };
  try {
    return await runOps(process.argv.slice(2), io, open);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    io.err(error.message);
    return 78;
  } finally {
    for (const close of closers.reverse()) await Promise.resolve(close()).catch(() => undefined);
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`ops: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
