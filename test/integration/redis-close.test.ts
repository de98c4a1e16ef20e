import { once } from 'node:events';
import { Redis } from 'ioredis';
import { closeRedis } from '../../src/db/redis-connection';
import { testState } from '../support/test-env';

const timers = () => process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;

/** ioredis clients close without leaving anything that holds the process open. */
describe('closeRedis', () => {
  const { redisUrl } = testState();

  it('leaves no timer behind when the client is closed during its ready check', async () => {
    const before = timers();
    const redis = new Redis(redisUrl);
    const subscriber = redis.duplicate();
    void subscriber.subscribe('galang-test-close').catch(() => undefined);
    // Connected, not yet ready: the ready check's INFO is in flight.
    await Promise.all([once(redis, 'connect'), once(subscriber, 'connect')]);
    await Promise.all([closeRedis(redis), closeRedis(subscriber)]);
    expect([redis.status, subscriber.status]).toEqual(['end', 'end']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(timers()).toBeLessThanOrEqual(before);
  });

  it('gives up on a client that cannot reach Redis, and stops its reconnecting', async () => {
    const redis = new Redis('redis://127.0.0.1:9', { retryStrategy: () => 50 });
    redis.on('error', () => undefined);
    await closeRedis(redis, 200);
    let attempts = 0;
    redis.on('reconnecting', () => attempts++);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(attempts).toBe(0);
  });
});
