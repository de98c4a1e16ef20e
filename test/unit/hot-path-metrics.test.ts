import { Counter, Histogram, Registry } from 'prom-client';
import { FastHistogram, TallyCounter } from '../../src/observability/hot-path-metrics';

const BUCKETS = [0.001, 0.01, 0.1, 1];
const OBSERVED = [0.0005, 0.001, 0.002, 0.05, 0.05, 0.5, 3, 0];

describe('hot-path metrics', () => {
  it('expose a histogram exactly as prom-client does for the same observations', async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const fast = new FastHistogram<'route' | 'status_code'>({
      name: 'h_seconds',
      help: 'latency',
      buckets: BUCKETS,
      registry: ours,
    });
    const reference = new Histogram({
      name: 'h_seconds',
      help: 'latency',
      labelNames: ['route', 'status_code'],
      buckets: BUCKETS,
      registers: [theirs],
    });
    const a = fast.labels({ route: '/a', status_code: 200 });
    const b = fast.labels({ route: '/b', status_code: 404 });
    for (const value of OBSERVED) {
      a.observe(value);
      reference.observe({ route: '/a', status_code: 200 }, value);
    }
    b.observe(0.2);
    reference.observe({ route: '/b', status_code: 404 }, 0.2);

    expect(await ours.metrics()).toBe(await theirs.metrics());
  });

  it('binds one series per label set, and reset zeroes it in place', async () => {
    const registry = new Registry();
    const fast = new FastHistogram<'route'>({
      name: 'h',
      help: 'h',
      buckets: BUCKETS,
      registry,
    });
    const first = fast.labels({ route: '/a' });
    const again = fast.labels({ route: '/a' });
    first.observe(0.5);
    again.observe(0.5);
    expect(await registry.metrics()).toContain('h_count{route="/a"} 2');

    registry.resetMetrics();
    first.observe(0.5);
    expect(await registry.metrics()).toContain('h_count{route="/a"} 1');
  });

  it('hand a counter its tallies when scraped, and only once', async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const tally = new TallyCounter({
      name: 'c_total',
      help: 'reads',
      labelNames: ['result'],
      registry: ours,
    });
    const reference = new Counter({
      name: 'c_total',
      help: 'reads',
      labelNames: ['result'],
      registers: [theirs],
    });
    const local = tally.labels({ result: 'local' });
    const miss = tally.labels({ result: 'miss' });
    for (let i = 0; i < 5; i++) local.inc();
    miss.inc();
    reference.inc({ result: 'local' }, 5);
    reference.inc({ result: 'miss' });
    expect(await ours.metrics()).toBe(await theirs.metrics());
    // A second scrape adds nothing that was already handed over.
    expect(await ours.metrics()).toBe(await theirs.metrics());

    local.inc();
    const values = (await tally.get()).values;
    expect(values.find((v) => v.labels.result === 'local')?.value).toBe(6);
  });
});
