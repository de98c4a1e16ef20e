import pino from 'pino';
import type { Logger } from 'pino';
import { ConfigError, loadConfig } from '../config/config';
import type { Config } from '../config/config';
import { loggerOptions } from '../observability/logger-options';
import { PermanentBootError } from '../resilience/wait-until-up';
import type { Running } from './start-parts';
import { stopAll } from './start-parts';

/**
 * Shared shape of every entry point: load the config (exiting with its message when invalid),
 * start parts, stop them in reverse order on SIGINT/SIGTERM or when starting fails. A boot
 * refused for good (a dependency misconfigured) exits like an invalid config: its message on
 * stderr, exit code 78.
 */
export function runEntry(
  name: string,
  start: (config: Config, log: Logger, parts: Running[]) => Promise<void>,
): void {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(78);
    }
    throw error;
  }
  const log = pino(loggerOptions(config, name));
  const parts: Running[] = [];
  let stopping = false;
  const shutdown = async (code: number) => {
    if (stopping) return;
    stopping = true;
    log.info('stopping');
    await stopAll(parts);
    process.exit(code);
  };
  process.once('SIGINT', () => void shutdown(0));
  process.once('SIGTERM', () => void shutdown(0));
  start(config, log, parts).catch((error: unknown) => {
    log.fatal({ err: error }, 'failed to start');
    if (error instanceof PermanentBootError) {
      process.stderr.write(`Boot refused: ${error.message}\n`);
      void shutdown(78);
      return;
    }
    void shutdown(1);
  });
}
