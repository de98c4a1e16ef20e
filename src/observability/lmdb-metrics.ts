import { Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import type { StoreStats } from '../idempotency/idempotency-record';

/** What the gauges read: the idempotency store, or anything with the same counters. */
export interface StoreStatsSource {
  stats(): StoreStats;
}

/**
 * Gauges of the edge's LMDB environment, read from the store when Prometheus scrapes (the
 * counts are O(1) reads of LMDB's own statistics), so they cost nothing between scrapes and
 * are never stale. Until a store is attached they report nothing.
 */
export function createLmdbGauges(registry: Registry) {
  let source: StoreStatsSource | undefined;
  const read = () => source?.stats();
  new Gauge({
    name: 'galang_lmdb_entries',
    help: 'Entries in the idempotency store, by database (records, expiry index; claims: the records in flight)',
    labelNames: ['db'] as const,
    registers: [registry],
    collect() {
      const stats = read();
      if (!stats) return;
      this.set({ db: 'records' }, stats.records);
      this.set({ db: 'expiry' }, stats.indexEntries);
      this.set({ db: 'claims' }, stats.claims);
    },
  });
  // Each a number of the store's statistics, read when Prometheus scrapes.
  const statGauge = (name: string, help: string, pick: (stats: StoreStats) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        const stats = read();
        if (stats) this.set(pick(stats));
      },
    });
  statGauge(
    'galang_lmdb_claims_used_bytes',
    "Bytes in use of the claims' LMDB environment, which lives in shared memory (/dev/shm)",
    (stats) => stats.claimsUsedBytes,
  );
  statGauge(
    'galang_lmdb_used_bytes',
    'Bytes of the LMDB data files in use, answers and claims (pages up to the last one written)',
    (stats) => stats.usedBytes,
  );
  statGauge(
    'galang_lmdb_map_bytes',
    'Current LMDB map size: how far the data file may grow before LMDB remaps it',
    (stats) => stats.mapBytes,
  );
  return {
    /** Reports this store's statistics from now on. */
    watch(store: StoreStatsSource): void {
      source = store;
    },
  };
}
