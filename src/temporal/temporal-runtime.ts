import { Runtime } from '@temporalio/worker';
import type { Logger as TemporalLogger, LogLevel, LogMetadata } from '@temporalio/worker';
import type { Logger } from 'pino';
import { AppError } from '../errors/error-catalogue';
import type { MetricsText } from '../observability/metrics-route';

export interface TemporalRuntimeOptions {
  /** Where to serve the SDK's Prometheus metrics (`host:port`); undefined serves none. */
  metricsBindAddress: string | undefined;
  /** The process's pino logger: workflow, activity and SDK lines become JSON lines like ours. */
  log: Logger;
}

/** Histogram buckets of galang's own worker metrics, in seconds (the SDK's are in ms-like steps). */
const BUCKETS: Record<string, number[]> = {
  galang_donation_confirmation_seconds: [1, 2, 5, 10, 30, 60, 120, 300, 600, 900, 1800, 3600],
};

/**
 * Installs the Temporal Runtime of this process: its logger and its Prometheus exporter. It is
 * process-wide and fixed once anything has created a NativeConnection or a Worker, so entry
 * points call this first. Counters end in `_total` and durations are seconds, as Prometheus
 * expects; SDK metric names keep their `temporal_` prefix, galang's own start with `galang_`.
 */
export function installTemporalRuntime(options: TemporalRuntimeOptions): void {
  const { metricsBindAddress } = options;
  Runtime.install({
    logger: pinoTemporalLogger(options.log),
    telemetryOptions: {
      logging: { forward: {}, filter: { core: 'WARN', other: 'ERROR' } },
      ...(metricsBindAddress && {
        metrics: {
          prometheus: {
            bindAddress: metricsBindAddress,
            countersTotalSuffix: true,
            useSecondsForDurations: true,
            histogramBucketOverrides: BUCKETS,
          },
        },
      }),
    },
  });
}

/**
 * Reads the SDK's Prometheus exporter at `url` for one scrape. The exporter has no
 * authentication, so it listens on loopback only and galang's own endpoint, which checks the
 * METRICS_TOKEN, answers for it (src/runtime/worker-metrics-server.ts).
 */
export function exporterScrape(url: string, timeoutMs = 5_000): () => Promise<MetricsText> {
  return async () => {
    let answer: Response;
    try {
      answer = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    } catch (error) {
      throw new AppError('service-unavailable', { retryAfter: 1, cause: error });
    }
    if (!answer.ok) {
      throw new AppError('service-unavailable', {
        retryAfter: 1,
        detail: `The Temporal SDK's exporter answered ${answer.status}.`,
      });
    }
    return {
      contentType: answer.headers.get('content-type') ?? 'text/plain; version=0.0.4',
      body: await answer.text(),
    };
  };
}

const LEVELS = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
} as const satisfies Record<LogLevel, string>;

/** The SDK's logger interface over pino; the SDK's own timestamp symbol is left out. */
export function pinoTemporalLogger(log: Logger): TemporalLogger {
  const write = (level: LogLevel, message: string, meta?: LogMetadata) => {
    // The SDK logs every task at TRACE/DEBUG: copy the metadata only for lines that are written.
    if (log.isLevelEnabled(LEVELS[level])) log[LEVELS[level]]({ ...meta }, message);
  };
  return {
    log: write,
    trace: (message, meta) => {
      write('TRACE', message, meta);
    },
    debug: (message, meta) => {
      write('DEBUG', message, meta);
    },
    info: (message, meta) => {
      write('INFO', message, meta);
    },
    warn: (message, meta) => {
      write('WARN', message, meta);
    },
    error: (message, meta) => {
      write('ERROR', message, meta);
    },
  };
}
