import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import { CircuitBreaker } from '../resilience/circuit-breaker';
import type { BreakerState } from '../resilience/circuit-breaker';

/** The plugin's stores; `read` is its peek (`{ increment: false }`), missing from its types. */
type Store = FastifyRateLimitStore & { read: FastifyRateLimitStore['incr'] };
type Counted = { current: number; ttl: number };
type Callback = (error: Error | null, result?: Counted) => void;
type ChildOptions = Parameters<Store['child']>[0] & { perProcess?: boolean };

/* eslint-disable @typescript-eslint/no-require-imports -- the plugin ships its stores untyped */
const RedisStore = require('@fastify/rate-limit/store/RedisStore') as new (
  continueExceeding: boolean,
  exponentialBackoff: boolean,
  redis: Redis,
  key: string,
) => Store;
const LocalStore = require('@fastify/rate-limit/store/LocalStore') as new (
  continueExceeding: boolean,
  exponentialBackoff: boolean,
  cache?: number,
) => Store;
/* eslint-enable @typescript-eslint/no-require-imports */

export interface FallbackStoreOptions {
  redis: Redis;
  /** Prefix of the counters' keys in Redis (after the client's own key prefix). */
  nameSpace: string;
  /** Told when the limiter moves to or back from its per-process counters. */
  onStateChange?: (state: BreakerState) => void;
}

/**
 * @fastify/rate-limit's Redis store, falling back to its in-process store while Redis fails:
 * the plugin's own `skipOnError` would let every request through during an outage, and without
 * it every request would fail. While Redis is away each process counts on its own (so N
 * processes admit up to N× the limit); a circuit breaker keeps a dead Redis from costing each
 * request a timeout and probes it again after a few seconds.
 */
export function fallbackRateLimitStore(options: FallbackStoreOptions): FastifyRateLimitStoreCtor {
  const breaker = new CircuitBreaker({
    failureThreshold: 3,
    cooldownMs: 5_000,
    timeoutMs: 250,
    ...(options.onStateChange && { onStateChange: options.onStateChange }),
  });

  class FallbackStore implements Store {
    private readonly redis: Store | undefined;
    private readonly local: Store;

    /** The plugin passes its settings; a route's child gets its parent's stores' children. */
    constructor(_settings?: unknown, children?: { redis: Store | undefined; local: Store }) {
      this.redis = children
        ? children.redis
        : new RedisStore(false, false, options.redis, options.nameSpace);
      this.local = children?.local ?? new LocalStore(false, false);
    }

    incr(key: string, callback: Callback, timeWindow: number, max: number): void {
      this.count('incr', key, callback, timeWindow, max);
    }

    /** The plugin's non-counting peek (`{ increment: false }`), with the same fallback. */
    read(key: string, callback: Callback, timeWindow: number, max: number): void {
      this.count('read', key, callback, timeWindow, max);
    }

    private count(
      method: 'incr' | 'read',
      key: string,
      callback: Callback,
      timeWindow: number,
      max: number,
    ): void {
      const redis = this.redis;
      const local = () => {
        this.local[method](key, callback, timeWindow, max);
      };
      if (!redis) {
        local();
        return;
      }
      const fromRedis = () =>
        new Promise<Counted>((resolve, reject) => {
          redis[method](
            key,
            (error, result) => {
              if (error || !result) reject(error ?? new Error('no result'));
              else resolve(result);
            },
            timeWindow,
            max,
          );
        });
      breaker.call(fromRedis).then((result) => {
        callback(null, result);
      }, local);
    }

    /** A route whose policy says `perProcess` counts in this process only, never in Redis. */
    child(routeOptions: ChildOptions): Store {
      return new FallbackStore(undefined, {
        redis: routeOptions.perProcess
          ? undefined
          : (this.redis?.child(routeOptions) as Store | undefined),
        local: this.local.child(routeOptions) as Store,
      });
    }
  }
  return FallbackStore;
}
