import { rmSync } from 'node:fs';
import { Redis } from 'ioredis';
import pg from 'pg';
import { stopDevServer } from '../../src/temporal/dev-server';
import { testState } from './test-env';
import { closeRedis } from '../../src/db/redis-connection';

/** Stops and removes what the global setup started: server, database, Redis keys, files. */
export default async function globalTeardown(): Promise<void> {
  const state = testState();
  await stopDevServer(state.stateDir, state.temporalPort);

  const admin = new pg.Client({ connectionString: state.adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(state.database)} WITH (FORCE)`);
  await admin.end();

  const redis = new Redis(state.redisUrl);
  const keys = await redis.keys(`${state.redisKeyPrefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await closeRedis(redis);

  rmSync(state.stateDir, { recursive: true, force: true });
}
