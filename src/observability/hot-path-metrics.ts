/*
 * Metrics written on every request. prom-client validates and hashes the label set on every
 * `observe` and `inc`, even through a `labels()` child: about a microsecond per request, where
 * a whole cached progress read costs about twenty (docs/benchmarks.md). These keep a plain
 * number (or bucket array) per label set, bound once, and hand prom-client the totals when
 * scraped. The exposition is the same as prom-client's own histogram and counter.
 */
import { Counter } from 'prom-client';
import type { Metric, MetricObjectWithValues, MetricValueWithName, Registry } from 'prom-client';

/** A line of the exposition, as prom-client's registry reads it from `get()`. */
interface ExposedValue {
  metricName: string;
  labels: Record<string, string | number>;
  value: number;
}

/** One label set's tally; `inc` is an addition. */
export interface Tally {
  inc(): void;
}

/**
 * A labelled counter whose increments are plain additions, added to a prom-client counter of
 * the same name at each scrape (its `collect`).
 */
export class TallyCounter<L extends string> {
  private readonly pending = new Map<string, { labels: Partial<Record<L, string>>; n: number }>();
  private readonly counter: Counter<L>;

  constructor(options: { name: string; help: string; labelNames: L[]; registry: Registry }) {
    const pending = this.pending;
    this.counter = new Counter<L>({
      name: options.name,
      help: options.help,
      labelNames: options.labelNames,
      registers: [options.registry],
      collect() {
        for (const tally of pending.values()) {
          if (tally.n === 0) continue;
          this.inc(tally.labels, tally.n);
          tally.n = 0;
        }
      },
    });
  }

  /** The tally of one label set; bind it once and call `inc` on the hot path. */
  labels(labels: Record<L, string>): Tally {
    const key = JSON.stringify(labels);
    let tally = this.pending.get(key);
    if (!tally) {
      tally = { labels, n: 0 };
      this.pending.set(key, tally);
    }
    const bound = tally;
    return {
      inc: () => {
        bound.n++;
      },
    };
  }

  /** What prom-client reports, pending increments included. */
  get(): Promise<MetricObjectWithValues<MetricValueWithName<L>>> {
    return this.counter.get();
  }
}

/** One label set of a `FastHistogram`. */
export interface HistogramSeries {
  /** Records one value, in the histogram's unit (seconds). */
  observe(value: number): void;
}

interface SeriesState {
  labels: Record<string, string | number>;
  /** Per bucket, not cumulative; the last slot is +Inf. */
  counts: Float64Array;
  sum: number;
  count: number;
}

/**
 * A Prometheus histogram registered with prom-client's registry, whose series are bound once
 * and whose `observe` is a bucket scan and three additions.
 */
export class FastHistogram<L extends string> {
  readonly type = 'histogram' as const;
  readonly aggregator = 'sum' as const;
  readonly name: string;
  readonly help: string;
  private readonly bounds: readonly number[];
  private readonly series = new Map<string, SeriesState>();

  constructor(options: {
    name: string;
    help: string;
    buckets: readonly number[];
    registry: Registry;
  }) {
    this.name = options.name;
    this.help = options.help;
    this.bounds = [...options.buckets].sort((a, b) => a - b);
    options.registry.registerMetric(this as unknown as Metric);
  }

  /** The series of one label set; callers keep it, so the label set is looked up once. */
  labels(labels: Record<L, string | number>): HistogramSeries {
    const key = JSON.stringify(labels);
    let state = this.series.get(key);
    if (!state) {
      state = { labels, counts: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 };
      this.series.set(key, state);
    }
    const bound = state;
    const bounds = this.bounds;
    return {
      observe(value: number): void {
        let i = 0;
        while (i < bounds.length && value > (bounds[i] as number)) i++;
        bound.counts[i] = (bound.counts[i] as number) + 1;
        bound.sum += value;
        bound.count++;
      },
    };
  }

  /** prom-client's histogram exposition: cumulative `_bucket` per bound and `+Inf`, `_sum`, `_count`. */
  get(): Promise<{
    name: string;
    help: string;
    type: 'histogram';
    aggregator: 'sum';
    values: ExposedValue[];
  }> {
    const values: ExposedValue[] = [];
    for (const { labels, counts, sum, count } of this.series.values()) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += counts[i] as number;
        values.push({
          metricName: `${this.name}_bucket`,
          labels: { le, ...labels },
          value: cumulative,
        });
      });
      values.push({
        metricName: `${this.name}_bucket`,
        labels: { le: '+Inf', ...labels },
        value: count,
      });
      values.push({ metricName: `${this.name}_sum`, labels, value: sum });
      values.push({ metricName: `${this.name}_count`, labels, value: count });
    }
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values,
    });
  }

  /** Zeroes every series in place: callers keep their bound series. */
  reset(): void {
    for (const state of this.series.values()) {
      state.counts.fill(0);
      state.sum = 0;
      state.count = 0;
    }
  }
}
