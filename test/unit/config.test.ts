import { productionEnv } from '../support/production-env';
import { ConfigError, loadConfig } from '../../src/config/config';
import { defaultClaimsPath } from '../../src/idempotency/claims-location';

describe('configuration', () => {
  it('has defaults that work on a developer machine, and is frozen', () => {
    const config = loadConfig({});
    expect(config.databaseUrl).toBe('postgres://postgres@127.0.0.1:5432/galang');
    expect(config.port).toBe(3000);
    expect(config.temporal.address).toBe('127.0.0.1:7233');
    expect(config.temporal.uiPort).toBe(8233);
    expect(config.apiKeys.get('demo-client')).toBe('demo-secret');
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.temporal)).toBe(true);
  });

  it('lists every problem at once', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: 'eighty', DATABASE_URL: 'not a url', API_KEYS: 'nosecret' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toHaveLength(3);
  });

  it('demands real keys and secrets in production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/API_KEYS is required/);
  });

  it('refuses short secrets and duplicate ids', () => {
    expect(() => loadConfig({ API_KEYS: 'a:short' })).toThrow(/at least 8/);
    expect(() => loadConfig({ API_KEYS: 'a:12345678,a:87654321' })).toThrow(/twice/);
  });

  it("serves the worker's metrics on 9464 unless told another port or 0 (none)", () => {
    expect(loadConfig({}).workerMetricsPort).toBe(9464);
    expect(loadConfig({ WORKER_METRICS_PORT: '0' }).workerMetricsPort).toBe(0);
    expect(() => loadConfig({ WORKER_METRICS_PORT: '70000' })).toThrow(/WORKER_METRICS_PORT/);
  });

  it('bounds the early return and sizes the workers, within limits', () => {
    const config = loadConfig({ EARLY_RETURN_MS: '800', WORKER_PROCESSES: '3' });
    expect(config.earlyReturn).toEqual({ budgetMs: 800, maxInFlight: 100 });
    expect(config.worker).toMatchObject({ processes: 3, maxConcurrentWorkflowTasks: 100 });
    expect(() => loadConfig({ EARLY_RETURN_MS: '120000' })).toThrow(/EARLY_RETURN_MS/);
    expect(() => loadConfig({ WORKER_WORKFLOW_POLLERS: '1' })).toThrow(/WORKER_WORKFLOW_POLLERS/);
  });

  it('polls both task queues unless told one, and refuses a queue it does not know', () => {
    expect(loadConfig({}).worker.taskQueues).toEqual(['donations', 'receipts']);
    expect(loadConfig({ WORKER_TASK_QUEUES: 'receipts' }).worker.taskQueues).toEqual(['receipts']);
    expect(() => loadConfig({ WORKER_TASK_QUEUES: 'donations,mail' })).toThrow(
      /WORKER_TASK_QUEUES must list one or both of donations, receipts, got "donations,mail"/,
    );
    expect(() => loadConfig({ WORKER_TASK_QUEUES: ',' })).toThrow(/WORKER_TASK_QUEUES/);
  });

  it('keeps idempotency records for at least 24 hours', () => {
    expect(() => loadConfig({ IDEMPOTENCY_TTL_SECONDS: '60' })).toThrow(/IDEMPOTENCY_TTL/);
  });

  it('puts the idempotency claims where every process of the store finds them', () => {
    const config = loadConfig({ LMDB_PATH: '/var/lib/galang/idempotency' });
    expect(config.lmdbClaimsPath).toBe(defaultClaimsPath('/var/lib/galang/idempotency'));
    expect(loadConfig({ LMDB_CLAIMS_PATH: '/run/galang/claims' }).lmdbClaimsPath).toBe(
      '/run/galang/claims',
    );
  });
});

describe('reconciliation settings', () => {
  it('runs every 5 minutes with a 5-minute grace by default; 0 disables the schedule', () => {
    expect(loadConfig({}).reconciliation).toEqual({
      intervalSeconds: 300,
      graceSeconds: 300,
      providerWindowDays: 120,
    });
    expect(loadConfig({ RECONCILE_INTERVAL_SECONDS: '0' }).reconciliation.intervalSeconds).toBe(0);
  });

  it('refuses intervals and grace periods that are not whole seconds within a day', () => {
    expect(() => loadConfig({ RECONCILE_INTERVAL_SECONDS: '-1' })).toThrow(
      /RECONCILE_INTERVAL_SECONDS/,
    );
    expect(() => loadConfig({ RECONCILE_INTERVAL_SECONDS: '5m' })).toThrow(
      /RECONCILE_INTERVAL_SECONDS/,
    );
    expect(() => loadConfig({ RECONCILE_GRACE_SECONDS: '100000' })).toThrow(
      /RECONCILE_GRACE_SECONDS/,
    );
  });
});

describe('campaign page and log settings', () => {
  it('serves the page and pretty logs in development, neither in production unless asked', () => {
    const development = loadConfig({});
    expect(development.demoPage).toBe(true);
    expect(development.logFormat).toBe('pretty');
    const production = productionEnv();
    expect(loadConfig(production)).toMatchObject({ demoPage: false, logFormat: 'json' });
    expect(loadConfig({ ...production, DEMO_PAGE: 'true' }).demoPage).toBe(true);
    expect(loadConfig({ NODE_ENV: 'test' }).logFormat).toBe('json');
    expect(() => loadConfig({ DEMO_PAGE: 'yes' })).toThrow(/DEMO_PAGE must be one of true, false/);
    expect(() => loadConfig({ LOG_FORMAT: 'xml' })).toThrow(/LOG_FORMAT/);
  });

  it('links the Temporal UI beside the Temporal server unless told another URL', () => {
    expect(loadConfig({}).temporal.uiUrl).toBe('http://127.0.0.1:8233');
    expect(
      loadConfig({ TEMPORAL_ADDRESS: 'temporal.internal:7233', TEMPORAL_UI_PORT: '8080' }).temporal
        .uiUrl,
    ).toBe('http://temporal.internal:8080');
    expect(loadConfig({ TEMPORAL_UI_URL: 'https://temporal.example.com' }).temporal.uiUrl).toBe(
      'https://temporal.example.com',
    );
  });
});
