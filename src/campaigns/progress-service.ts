import type { FastifyBaseLogger } from 'fastify';
import type { Counter } from 'prom-client';
import { AppError } from '../errors/error-catalogue';
import { CircuitBreaker } from '../resilience/circuit-breaker';
import type { ProgressMetrics } from '../observability/metrics';
import type { CampaignRepository } from './campaign-repository';
import { toCachedProgress } from './progress-cache';
import type { CachedProgress, ProgressCache } from './progress-cache';
import { LocalProgressCopies } from './local-progress-copies';
import { UnknownCampaigns } from './unknown-campaigns';
import { progressAnswer } from './progress-answer';
import type { ProgressAnswer } from './progress-answer';

export interface ProgressServiceOptions {
  campaigns: CampaignRepository;
  cache: ProgressCache;
  metrics: ProgressMetrics;
  log: FastifyBaseLogger;
  /** How long this process answers from its own copy before asking Redis again. */
  localTtlMs: number;
  /** Used when Redis cannot store the value: how long a rebuilt value counts as fresh. */
  ttlSeconds: number;
  /**
   * How long a miss waits for another process's rebuild before reading Postgres itself; below
   * the lock's 3 s, so a rebuilder that died costs a wait, not an outage.
   */
  rebuildWaitMs?: number;
}

const LOCK_MS = 3_000;
const POLL_MS = 20;

/**
 * Campaign progress for pages read thousands of times per second while donations confirm.
 *
 * Layers, fastest first: this process's copy (≤ `localTtlMs` old, dropped when the worker
 * publishes a change), Redis (shared; jittered TTL, then served stale while one caller
 * refreshes), Postgres (the truth). One miss per campaign reaches Postgres: concurrent misses
 * in a process share one promise, and across processes a short Redis lock elects the rebuilder
 * while the others wait for its value. Redis failing opens a circuit breaker and reads go to
 * Postgres directly; Postgres failing too leaves the last value this process saw, marked stale,
 * or a 503. An id Postgres just reported missing answers 404 from memory for a moment.
 */
export class ProgressService {
  private readonly copies = new LocalProgressCopies();
  private readonly unknown = new UnknownCampaigns();
  private readonly rebuilding = new Map<string, Promise<CachedProgress | undefined>>();
  private readonly breaker: CircuitBreaker;
  private readonly stopListening: () => Promise<void>;
  /** The read counter's child per result, bound once. */
  private readonly counted: Record<ProgressResult, Counter.Internal>;

  constructor(private readonly options: ProgressServiceOptions) {
    const { metrics, log } = options;
    const results: ProgressResult[] = [
      'local',
      'hit',
      'stale',
      'miss',
      'bypass',
      'last-known',
      'unknown',
    ];
    this.counted = Object.fromEntries(
      results.map((result) => [result, metrics.requests.labels({ result })]),
    ) as Record<ProgressResult, Counter.Internal>;
    this.breaker = new CircuitBreaker({
      failureThreshold: 3,
      cooldownMs: 5_000,
      timeoutMs: 250,
      onStateChange: (state) => {
        metrics.breakerOpen.set(state === 'closed' ? 0 : 1);
        log.warn({ state }, 'progress cache circuit breaker');
      },
    });
    this.stopListening = options.cache.subscribe((campaignId) => {
      this.copies.expire(campaignId);
    });
  }

  /**
   * A campaign's progress: this process's copy while it is fresh enough, else Redis, else
   * Postgres (one rebuild per miss), else the last known value, else a 503.
   */
  async get(campaignId: string): Promise<ProgressAnswer> {
    const now = Date.now();
    const local = this.copies.get(campaignId);
    if (local && now - local.storedAt < this.options.localTtlMs && local.value.freshUntil > now) {
      this.counted.local.inc();
      return local.answer;
    }
    if (this.unknown.has(campaignId, now)) {
      this.counted.unknown.inc();
      throw new AppError('campaign-not-found');
    }

    let cached: CachedProgress | undefined;
    let redisUp = true;
    try {
      cached = await this.breaker.call(() => this.options.cache.get(campaignId));
    } catch {
      redisUp = false;
    }
    if (cached) {
      if (cached.freshUntil > now) {
        this.counted.hit.inc();
        return this.copies.remember(cached, now).answer;
      }
      this.counted.stale.inc();
      this.refreshInBackground(campaignId);
      return progressAnswer(cached, true);
    }

    (redisUp ? this.counted.miss : this.counted.bypass).inc();
    try {
      // A shared background refresh that found another rebuilder yields nothing: read directly.
      const value =
        (await this.rebuild(campaignId, redisUp ? 'miss' : 'bypass')) ??
        (await this.load(campaignId, redisUp));
      return this.copies.remember(value, Date.now()).answer;
    } catch (error) {
      if (error instanceof AppError) throw error;
      const lastKnown = this.copies.get(campaignId);
      if (lastKnown) {
        this.counted['last-known'].inc();
        this.options.log.warn({ err: error }, 'progress from Postgres failed; serving last known');
        return progressAnswer(lastKnown.value, true);
      }
      throw new AppError('service-unavailable', { retryAfter: 5, cause: error });
    }
  }

  close(): Promise<void> {
    return this.stopListening();
  }

  private refreshInBackground(campaignId: string): void {
    this.rebuild(campaignId, 'refresh').catch((error: unknown) => {
      this.options.log.warn({ err: error, campaignId }, 'progress refresh failed');
    });
  }

  /** One rebuild per campaign in this process at a time; the callers share its result. */
  private rebuild(campaignId: string, mode: RebuildMode): Promise<CachedProgress | undefined> {
    let pending = this.rebuilding.get(campaignId);
    if (!pending) {
      pending = this.rebuildOnce(campaignId, mode).finally(() => {
        this.rebuilding.delete(campaignId);
      });
      this.rebuilding.set(campaignId, pending);
    }
    return pending;
  }

  /**
   * `miss`: elect one rebuilder across processes; the others wait for its value.
   * `refresh`: a stale value is being served; rebuild only if no one else is.
   * `bypass`: Redis is out; read Postgres without it.
   */
  private async rebuildOnce(
    campaignId: string,
    mode: RebuildMode,
  ): Promise<CachedProgress | undefined> {
    if (mode === 'bypass') return this.load(campaignId, false);
    const { cache } = this.options;
    const token = await this.breaker
      .call(() => cache.tryLock(campaignId, LOCK_MS))
      .catch(() => undefined);
    if (token === undefined) {
      if (mode === 'refresh') return undefined;
      return (await this.waitForRebuild(campaignId)) ?? this.load(campaignId, true);
    }
    try {
      return await this.load(campaignId, true);
    } finally {
      await this.breaker.call(() => cache.unlock(campaignId, token)).catch(() => undefined);
    }
  }

  /** Reads Postgres and, when Redis is usable, stores the value there for every process. */
  private async load(campaignId: string, store: boolean): Promise<CachedProgress> {
    const progress = await this.options.campaigns.progress(campaignId);
    this.options.metrics.rebuilds.inc();
    if (!progress) {
      this.unknown.remember(campaignId, Date.now());
      throw new AppError('campaign-not-found');
    }
    const local = () => toCachedProgress(progress, Date.now() + this.options.ttlSeconds * 1000);
    if (!store) return local();
    return this.breaker.call(() => this.options.cache.set(progress)).catch(local);
  }

  /** Another process holds the rebuild lock: poll for the value it is about to write. */
  private async waitForRebuild(campaignId: string): Promise<CachedProgress | undefined> {
    const deadline = Date.now() + (this.options.rebuildWaitMs ?? 2_000);
    while (Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      const value = await this.breaker
        .call(() => this.options.cache.get(campaignId))
        .catch(() => undefined);
      if (value && value.freshUntil > Date.now()) return value;
    }
    return undefined;
  }
}

type RebuildMode = 'miss' | 'refresh' | 'bypass';
type ProgressResult = 'local' | 'hit' | 'stale' | 'miss' | 'bypass' | 'last-known' | 'unknown';
