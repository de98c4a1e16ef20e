import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createDatabase } from '../../src/db/database';
import { migrateToLatest } from '../../src/db/migrate';
import { startDevServer } from '../../src/temporal/dev-server';
import { bundleWorkflows } from '../../src/runtime/donation-worker';
import { freePort } from './free-port';
import { TEST_STATE_VARIABLE } from './test-env';
import type { TestState } from './test-env';

/**
 * Starts what the tests share: a Temporal dev server on test ports (in memory, fresh each run),
 * a new database migrated from scratch, a Redis key prefix of this run's own, and one workflow
 * bundle. Jest's workers inherit the environment variable that describes them.
 */
export default async function globalSetup(): Promise<void> {
  const runId = `${process.pid}_${Date.now().toString(36)}`;
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'galang-test-'));
  // Free ports, so a leftover server from an interrupted run cannot collide with this one.
  const temporalPort = Number(process.env.TEST_TEMPORAL_PORT ?? (await freePort()));
  const server = await startDevServer({
    port: temporalPort,
    uiPort: await freePort(),
    stateDir,
    log: (line) => process.stdout.write(`\n[temporal] ${line}`),
  });

  const adminUrl =
    process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const database = `galang_test_${runId}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(database)}`);
  await admin.end();
  const databaseUrl = new URL(adminUrl);
  databaseUrl.pathname = `/${database}`;
  const db = createDatabase({ connectionString: databaseUrl.toString(), max: 1 });
  await migrateToLatest(db);
  await db.destroy();

  const bundle = await bundleWorkflows();
  const workflowBundlePath = path.join(stateDir, 'workflow-bundle.js');
  writeFileSync(workflowBundlePath, bundle.code);

  const state: TestState = {
    stateDir,
    temporalAddress: server.address,
    temporalPort,
    databaseUrl: databaseUrl.toString(),
    database,
    adminUrl,
    redisUrl: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    redisKeyPrefix: `galang-test:${runId}:`,
    workflowBundlePath,
  };
  process.env[TEST_STATE_VARIABLE] = JSON.stringify(state);
}
