import { Redis } from 'ioredis';
import type { Config } from '../config/config';

/**
 * Redis as a cache: commands fail fast rather than queue, because every caller has a
 * Postgres fallback and a slow cache is worse than a missed one.
 */
export function openRedis(config: Config): Redis {
  const redis = new Redis(config.redisUrl, {
    keyPrefix: config.redisKeyPrefix,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    commandTimeout: 1_000,
  });
  redis.on('error', () => undefined);
  return redis;
}

/**
 * Closes an ioredis client with QUIT once it is ready, so Redis ends the connection; a client
 * that does not get there within `graceMs` is dropped. Closing one during its ready check
 * leaves a 2 s timer of ioredis' behind that holds the process open (redis/ioredis#1247); a
 * client that cannot reach Redis still leaves one, only then.
 */
export async function closeRedis(redis: Redis, graceMs = 1_000): Promise<void> {
  const within = (events: readonly string[]) =>
    new Promise<void>((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        for (const event of events) redis.off(event, finish);
        resolve();
      };
      const timer = setTimeout(finish, graceMs);
      for (const event of events) redis.once(event, finish);
    });
  if (redis.status === 'connecting' || redis.status === 'connect') await within(['ready', 'close']);
  if (redis.status === 'ready') {
    const ended = within(['end']);
    redis.quit().catch(() => undefined);
    await ended;
  }
  if (redis.status !== 'end') redis.disconnect();
}
